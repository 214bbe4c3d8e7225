"""Trajectory assertions as Python helpers: order modes, argument modes with per-call
overrides, match operators, and the failure report."""

from __future__ import annotations

import re

import pytest

from pytest_agent_skills.harness import (
    CallRecord,
    ExpectationError,
    HarnessError,
    RequestRecord,
    Trajectory,
    TurnRecord,
    assert_trajectory,
    expect_calls,
    expect_files,
    expect_final,
    expect_requests,
    expect_results,
    expect_state,
)


def call(turn: int, name: str, arguments: dict, result: object = "ok") -> CallRecord:
    import json

    return CallRecord(turn, f"c{turn}", name, json.dumps(arguments), arguments, result)


TRAJECTORY = Trajectory(
    user="Weather?",
    requests=[
        RequestRecord(0, "Available skills:\n- weather: w", ("skill_load",), {}),
        RequestRecord(1, "[Loaded] weather", ("skill_load", "get_weather"), {}),
        RequestRecord(2, "[Loaded] weather", ("skill_load", "get_weather"), {}),
    ],
    turns=[
        TurnRecord(0, None, (call(0, "skill_load", {"skill_name": "weather"}),)),
        TurnRecord(
            1,
            None,
            (
                call(
                    1, "get_weather", {"city": "Paris", "days": 2}, {"temperature": 21, "ok": True}
                ),
                call(1, "get_weather", {"city": "Oslo"}, {"temperature": -3}),
            ),
        ),
        TurnRecord(2, "It is 21 degrees in Paris.", ()),
    ],
    state={"temp:skill:loaded:weather": "1"},
    files={"out/report.txt": b"Paris: 21\n"},
    final="It is 21 degrees in Paris.",
)
LOAD = {"name": "skill_load", "args": {"skill_name": "weather"}}
PARIS = {"name": "get_weather", "args": {"city": "Paris", "days": 2}}
OSLO = {"name": "get_weather", "args": {"city": "Oslo"}}


def failure_line(error: ExpectationError) -> str:
    return str(error).splitlines()[1]


@pytest.mark.parametrize(
    ("mode", "items"),
    [
        ("exact", [LOAD, PARIS, OSLO]),
        ("in_order", [LOAD, OSLO]),
        ("any_order", [OSLO, LOAD, PARIS]),
        ("subset", [OSLO, LOAD]),
        ("superset", [OSLO, LOAD, PARIS, {"name": "skill_run"}]),
    ],
)
def test_order_modes_that_hold(mode, items) -> None:
    expect_calls(TRAJECTORY, items, mode=mode)


@pytest.mark.parametrize(
    ("mode", "items", "message"),
    [
        (
            "exact",
            [LOAD, OSLO, PARIS],
            "- expect.calls.items[1]: mode exact, args exact: call #1 get_weather"
            ' {"city": "Paris", "days": 2} does not match item 1 (get_weather {"city": "Oslo"}):'
            ' argument \'city\': expected "Oslo", found "Paris"',
        ),
        (
            "exact",
            [LOAD, PARIS],
            "- expect.calls: mode exact, args exact: 1 call(s) more than expected:"
            ' #2 get_weather {"city": "Oslo"}',
        ),
        (
            "in_order",
            [OSLO, PARIS],
            '- expect.calls.items[1]: mode in_order, args exact: item 1 (get_weather {"city":'
            ' "Paris", "days": 2}) has no matching call at or after call #3',
        ),
        (
            "any_order",
            [OSLO, LOAD],
            "- expect.calls: mode any_order, args exact: call(s) not in the expected items:"
            ' #1 get_weather {"city": "Paris", "days": 2}',
        ),
        (
            "subset",
            [OSLO, {"name": "skill_run"}],
            "- expect.calls.items[1]: mode subset, args exact: item 1 (skill_run) matches no call"
            " (or only calls already matched by other items)",
        ),
        (
            "superset",
            [LOAD, PARIS],
            "- expect.calls: mode superset, args exact: call(s) not in the expected items:"
            ' #2 get_weather {"city": "Oslo"}',
        ),
    ],
)
def test_order_modes_that_fail_say_why(mode, items, message) -> None:
    with pytest.raises(ExpectationError) as caught:
        expect_calls(TRAJECTORY, items, mode=mode)
    assert failure_line(caught.value) == message


@pytest.mark.parametrize(
    ("args_mode", "expected", "holds"),
    [
        ("exact", {"city": "Paris", "days": 2}, True),
        ("exact", {"city": "Paris"}, False),
        ("ignore", {"city": "Rome"}, True),
        ("subset", {"city": "Paris"}, True),
        ("subset", {"city": "Paris", "units": "C"}, False),
        ("subset", {"city": {"matches": "^Par"}}, True),
        ("superset", {"city": "Paris", "days": 2, "units": "C"}, True),
        ("superset", {"city": "Paris"}, False),
    ],
)
def test_argument_modes(args_mode, expected, holds) -> None:
    items = [{"name": "get_weather", "args": expected}]
    if holds:
        expect_calls(TRAJECTORY, items, mode="subset", args=args_mode)
    else:
        with pytest.raises(ExpectationError):
            expect_calls(TRAJECTORY, items, mode="subset", args=args_mode)


def test_a_per_call_argument_mode_overrides_the_default() -> None:
    items = [LOAD, {"name": "get_weather", "args": {"city": "Paris"}, "args_mode": "subset"}, OSLO]
    expect_calls(TRAJECTORY, items, mode="exact", args="exact")
    with pytest.raises(ExpectationError) as caught:
        expect_calls(TRAJECTORY, [LOAD, {"name": "get_weather", "args": {"city": "Paris"}}, OSLO])
    assert failure_line(caught.value).endswith("unexpected argument(s) 'days'")


def test_bare_names_and_results_state_files_final_requests() -> None:
    expect_calls(TRAJECTORY, ["skill_load", "get_weather"], mode="in_order", args="ignore")
    expect_results(
        TRAJECTORY,
        {"call": "get_weather", "match": {"temperature": 21, "ok": True}},
        {"call": "get_weather", "index": 1, "match": {"temperature": {"equals": -3}}},
        {"call": "skill_load", "match": "ok", "is_error": False},
    )
    expect_state(TRAJECTORY, {"temp:skill:loaded:weather": "1", "other": {"exists": False}})
    expect_files(
        TRAJECTORY,
        {"path": "out/report.txt", "contains": "Paris"},
        {"path": "out/none.txt", "exists": False},
    )
    expect_final(TRAJECTORY, {"matches": r"\d+ degrees"})
    expect_requests(
        TRAJECTORY,
        {"turn": 1, "tools_include": "get_weather", "system_contains": ["[Loaded] weather"]},
    )


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        (
            {"results": [{"call": "get_weather", "match": {"ok": 1}}]},
            "- expect.results[0].match: get_weather[0] result: ok: expected 1, found true",
        ),
        (
            {"results": [{"call": "get_weather", "index": 2}]},
            "- expect.results[0]: no call 2 of 'get_weather': it was called 2 time(s)",
        ),
        (
            {"results": [{"call": "skill_load", "is_error": True}]},
            '- expect.results[0]: skill_load[0] result is not an error: "ok"',
        ),
        (
            {"state": {"temp:skill:loaded:other": "1"}},
            "- expect.state.temp:skill:loaded:other: state 'temp:skill:loaded:other': missing"
            ' (expected "1")',
        ),
        (
            {"files": [{"path": "out/report.txt", "matches": "Oslo"}]},
            "- expect.files[0]: file out/report.txt: expected it to match /Oslo/, found"
            ' "Paris: 21\\n"',
        ),
        (
            {"files": [{"path": "out/x.txt"}]},
            "- expect.files[0]: file out/x.txt: expected it to exist"
            " (files present: out/report.txt)",
        ),
        (
            {"final": "Done."},
            '- expect.final: final text: expected "Done.", found "It is 21 degrees in Paris."',
        ),
        (
            {"final": {"contains": "Oslo"}},
            "- expect.final: final text: expected it to contain 'Oslo', found"
            ' "It is 21 degrees in Paris."',
        ),
        (
            {"requests": [{"turn": 0, "tools_include": ["get_weather"]}]},
            "- expect.requests[0].tools_include: turn 0: the tools does not contain 'get_weather':"
            ' ["skill_load"]',
        ),
        (
            {"requests": [{"turn": 1, "system_excludes": "[Loaded]"}]},
            "- expect.requests[0].system_excludes: turn 1: the system text contains '[Loaded]':"
            " ...'[Loaded] weather'...",
        ),
        ({"requests": [{"turn": 5}]}, "- expect.requests[0]: turn 5: only 3 request(s) were sent"),
    ],
)
def test_failed_checks_are_pinned(expect, message) -> None:
    with pytest.raises(ExpectationError) as caught:
        assert_trajectory(TRAJECTORY, expect)
    assert failure_line(caught.value) == message


def test_the_report_shows_the_expectation_and_the_whole_trajectory() -> None:
    with pytest.raises(ExpectationError) as caught:
        assert_trajectory(TRAJECTORY, {"final": "Done.", "state": {"x": "1"}})
    text = str(caught.value)
    assert text.splitlines()[0] == "trajectory: 2 expectation(s) not met"
    assert "Expected:\n  final: Done.\n  state:\n    x: '1'\n" in text
    assert "Trajectory: 3 model turn(s), 3 tool call(s)" in text
    assert '    call get_weather {"city": "Oslo"}\n      -> {"temperature": -3}' in text
    assert "    say It is 21 degrees in Paris." in text
    assert isinstance(caught.value, AssertionError)


def test_a_python_expectation_is_checked_against_the_schema() -> None:
    with pytest.raises(HarnessError, match=r"expect\.calls\.mode: 'sometimes' is not one of"):
        assert_trajectory(TRAJECTORY, {"calls": {"mode": "sometimes", "items": []}})


def test_check_helpers_take_a_list_as_well_as_separate_checks() -> None:
    from pytest_agent_skills.harness import expect_files
    from pytest_agent_skills.harness.trajectory import Trajectory

    trajectory = Trajectory(user="hi")
    trajectory.files = {"out/a.txt": b"hello"}
    expect_files(trajectory, [{"path": "out/a.txt", "contains": "hell"}])
    expect_files(trajectory, {"path": "out/a.txt", "contains": "hell"})
    message = "expect_files: each check must be a mapping, got 'out/a.txt'"
    with pytest.raises(TypeError, match=re.escape(message)):
        expect_files(trajectory, "out/a.txt")
