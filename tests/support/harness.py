"""Shared pieces of the harness tests: fixture scenarios, a scripted upstream, socket blocking."""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_agent_skills.harness import (
    LoopbackServer,
    RunOutcome,
    RunSettings,
    ScriptedBackend,
    ScriptedModel,
    run_conversation,
)
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.scenario import Scenario, load_scenarios

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"
SKILLS = FIXTURES / "skills"
SCENARIO_DIR = FIXTURES / "scenarios"


def fixture_scenarios() -> list[Scenario]:
    return [
        s for path in sorted(SCENARIO_DIR.glob("*.scenario.yaml")) for s in load_scenarios(path)
    ]


def conversation_script(scenario: Scenario) -> tuple[Any, ...]:
    """The scenario's model turns as one script (its turns' scripts one after the other)."""
    if scenario.script is not None:
        return scenario.script
    return tuple(turn for part in scenario.turns or () for turn in part.script or ())


def run_scenario(scenario: Scenario, **overrides: Any) -> RunOutcome:
    """Run a fixture scenario as the scenario items do (without pytest); with a cassette given
    in ``overrides``, its turns lose their own scripts (the cassette serves them all)."""
    from pytest_agent_skills.sources import resolve_root

    roots = [resolve_root(spec, base_dir=scenario.directory) for spec in scenario.skills or ()]
    turns = scenario.turns
    if turns is not None and overrides.get("cassette") is not None:
        turns = tuple(dataclasses.replace(turn, script=None) for turn in turns)
    arguments: dict[str, Any] = {
        "user": scenario.user,
        "turns": turns,
        "load_mode": scenario.load_mode,
        "script": scenario.script,
        "tools": scenario.tools,
        "dynamic_tools": scenario.dynamic_tools,
        "inputs": scenario.inputs,
        "env": scenario.env,
        "max_turns": scenario.max_turns,
    }
    arguments.update(overrides)
    return run_conversation(SkillRepository(roots or [SKILLS]), **arguments)


@contextlib.contextmanager
def scripted_upstream(
    script: Any, backend_type: type = ScriptedBackend
) -> Iterator[LoopbackServer]:
    """A second loopback server playing a real OpenAI-compatible endpoint."""
    with LoopbackServer(backend_type(ScriptedModel(script))) as server:
        yield server


def record_options(upstream: LoopbackServer, mode: str = "once", **kwargs: Any) -> RunSettings:
    from pytest_agent_skills.harness import Upstream

    return RunSettings(record_mode=mode, upstream=Upstream(upstream.base_url, "sk-test"), **kwargs)


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OffLoopbackConnection(AssertionError):
    """Raised by the socket guard for a connection attempt off this machine."""


@contextlib.contextmanager
def only_loopback(monkeypatch: Any) -> Iterator[list[Any]]:
    """Refuse (and list) every socket connection that is not to a loopback address."""
    attempts: list[Any] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(address: Any) -> None:
        if not _is_loopback(address):
            attempts.append(address)
            raise OffLoopbackConnection(f"blocked connection off loopback: {address!r}")

    def connect(self: socket.socket, address: Any) -> Any:
        guard(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        guard(address)
        return real_connect_ex(self, address)

    with monkeypatch.context() as patch:
        patch.setattr(socket.socket, "connect", connect)
        patch.setattr(socket.socket, "connect_ex", connect_ex)
        yield attempts
