"""The same scenarios through every path: direct, the openai SDK (plain and streaming),
and a cassette recorded from a loopback upstream, then replayed with off-loopback sockets blocked.
"""

from __future__ import annotations

import socket

import pytest

from pytest_agent_skills.harness import RunSettings, assert_trajectory
from tests.support.harness import (
    OffLoopbackConnection,
    conversation_script,
    fixture_scenarios,
    only_loopback,
    record_options,
    run_scenario,
    scripted_upstream,
)

SCENARIOS = fixture_scenarios()


def test_there_are_enough_fixture_scenarios() -> None:
    assert len(SCENARIOS) >= 10


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_path_gives_the_same_trajectory(scenario, tmp_path, monkeypatch) -> None:
    direct = run_scenario(scenario, transport="direct").trajectory
    assert_trajectory(direct, scenario.expect)
    for transport in ("sdk", "sdk-stream"):
        through_sdk = run_scenario(scenario, transport=transport).trajectory
        assert through_sdk.comparable() == direct.comparable(), transport
        assert_trajectory(through_sdk, scenario.expect)

    cassette = tmp_path / "cassette.json"
    with scripted_upstream(conversation_script(scenario)) as upstream:
        recorded = run_scenario(
            scenario, script=None, cassette=cassette, settings=record_options(upstream)
        )
    assert recorded.cassette.recorded == len(direct.requests)
    assert recorded.trajectory.comparable() == direct.comparable()

    for transport in ("sdk", "sdk-stream"):
        with only_loopback(monkeypatch) as blocked:
            replayed = run_scenario(
                scenario,
                script=None,
                cassette=cassette,
                transport=transport,
                settings=RunSettings(record_mode="none"),
            )
        assert blocked == []
        assert replayed.cassette.replayed == len(direct.requests)
        assert replayed.cassette.recorded == 0
        assert replayed.trajectory.comparable() == direct.comparable(), transport
        assert_trajectory(replayed.trajectory, scenario.expect)


def test_the_socket_guard_really_blocks_addresses_off_loopback(monkeypatch) -> None:
    with only_loopback(monkeypatch) as blocked, pytest.raises(OffLoopbackConnection):
        socket.create_connection(("192.0.2.1", 443), timeout=0.1)
    assert blocked == [("192.0.2.1", 443)]
