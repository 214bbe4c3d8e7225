"""The interactive tools (skill_exec & co.) through SkillSession, the agent loop, scenario files
and the skill_agent fixture, with the example interactive-greeter skill."""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_agent_skills.harness import RunSettings, run_conversation
from pytest_agent_skills.harness.coverage import CoverageCollector
from pytest_agent_skills.protocol import SkillSession
from pytest_agent_skills.protocol.prompt import GUIDANCE_HEADER
from pytest_agent_skills.workspace import Runtime, create_runtime, interactive
from pytest_agent_skills.workspace.interactive import session_id_for
from tests.support.interactive import (
    GREET,
    GREETER,
    MENU,
    YIELD_MS,
    all_gone,
    processes_running,
    unique_marker,
    wait_for,
)
from tests.support.protocol import call_error, call_ok, content, example_repository
from tests.support.workspace import RUNTIME_PARAMS, get_runtime, runtime, work_root  # noqa: F401

FIRST = session_id_for(1)
EXEC_NAMES = ["skill_exec", "skill_write_stdin", "skill_poll_session", "skill_kill_session"]


@pytest.fixture
def local(tmp_path) -> Iterator[Runtime]:
    with create_runtime("local", work_root=tmp_path) as created:
        yield created


@pytest.fixture
def session(local: Runtime) -> Iterator[SkillSession]:
    with SkillSession(example_repository(), runtime=local, exec_tools=True) as opened:
        yield opened


def exec_greeter(session: SkillSession, **extra: Any) -> dict[str, Any]:
    arguments = {"skill": "interactive-greeter", "command": GREET, "yield_time_ms": YIELD_MS}
    return call_ok(session, "skill_exec", {**arguments, **extra}).result


def write(session: SkillSession, session_id: str, chars: str) -> dict[str, Any]:
    arguments = {
        "session_id": session_id,
        "chars": chars,
        "submit": True,
        "yield_time_ms": YIELD_MS,
    }
    return call_ok(session, "skill_write_stdin", arguments).result


def test_the_four_tools_are_offered_together_after_skill_run_when_asked() -> None:
    repository = example_repository()
    plain = SkillSession(repository)
    with_exec = SkillSession(repository, exec_tools=True)
    dynamic = SkillSession(repository, exec_tools=True, dynamic_tools=True)

    def names(session: SkillSession) -> list[str]:
        return [tool["function"]["name"] for tool in session.tool_definitions()]

    assert not set(EXEC_NAMES) & set(names(plain))
    assert names(with_exec) == [
        "skill_load",
        "skill_run",
        *EXEC_NAMES,
        "skill_list",
        "skill_list_docs",
        "skill_select_docs",
    ]
    assert names(dynamic)[2:6] == EXEC_NAMES
    assert names(dynamic)[-2:] == ["skill_list_tools", "skill_select_tools"]
    outcome = plain.call("skill_exec", {"skill": "interactive-greeter", "command": GREET})
    assert outcome.error_code == "unknown_tool"


def test_parameters_carry_the_reference_names() -> None:
    definitions = {
        tool["function"]["name"]: tool["function"]["parameters"]
        for tool in SkillSession(example_repository(), exec_tools=True).tool_definitions()
    }

    shapes = {name: (list(d["properties"]), d.get("required")) for name, d in definitions.items()}
    assert shapes["skill_exec"] == (
        [
            "skill",
            "command",
            "cwd",
            "env",
            "stdin",
            "tty",
            "yield_time_ms",
            "poll_lines",
            "output_files",
            "timeout",
            "save_as_artifacts",
            "omit_inline_content",
        ],
        ["skill", "command"],
    )
    assert shapes["skill_write_stdin"] == (
        ["session_id", "chars", "submit", "yield_time_ms", "poll_lines"],
        ["session_id"],
    )
    assert shapes["skill_poll_session"] == (
        ["session_id", "yield_time_ms", "poll_lines"],
        ["session_id"],
    )
    assert shapes["skill_kill_session"] == (["session_id"], ["session_id"])


def test_the_guidance_names_skill_exec_only_when_it_is_offered() -> None:
    user = [{"role": "user", "content": "Greet me."}]
    with_exec = SkillSession(example_repository(), exec_tools=True).build_request(user).system
    plain = SkillSession(example_repository()).build_request(user).system

    guidance = with_exec.split(f"{GUIDANCE_HEADER}\n", 1)[1]
    assert "- Use skill_exec only for a command that asks for input" in guidance
    assert "skill_exec" not in plain.split(f"{GUIDANCE_HEADER}\n", 1)[1]


def test_a_prompting_skill_is_answered_through_the_tools(runtime: Runtime) -> None:
    with SkillSession(example_repository(), runtime=runtime, exec_tools=True) as session:
        asked = exec_greeter(session, output_files=["out/*.txt"])
        menu = write(session, asked["session_id"], "Ada")
        done = write(session, asked["session_id"], "3")

    assert asked == {
        "status": "running",
        "session_id": FIRST,
        "output": "Name? ",
        "offset": 0,
        "next_offset": 6,
        "interaction": {"needs_input": True, "kind": "prompt", "hint": "Name?"},
    }
    assert menu["output"] == MENU and menu["interaction"]["kind"] == "selection"
    assert list(done)[:6] == [
        "status",
        "session_id",
        "output",
        "offset",
        "next_offset",
        "exit_code",
    ]
    assert (done["status"], done["exit_code"], done["output"]) == (
        "exited",
        0,
        "Hello, Ada! You like blue.\n",
    )
    assert done["offset"] == menu["next_offset"]
    assert "interaction" not in done
    result = done["result"]
    assert (result["exit_code"], result["timed_out"], result["stderr"]) == (0, False, "")
    assert [(f["name"], f["content"]) for f in result["output_files"]] == [
        ("out/greeting.txt", "Hello, Ada! You like blue.\n")
    ]


def test_poll_kill_and_the_unknown_session_error(session: SkillSession) -> None:
    started = call_ok(
        session,
        "skill_exec",
        {
            "skill": "interactive-greeter",
            "command": "printf 'Ready? '; read x; echo never",
            "yield_time_ms": YIELD_MS,
        },
    )
    session_id = started.result["session_id"]

    quiet = call_ok(session, "skill_poll_session", {"session_id": session_id, "yield_time_ms": 1})
    killed = call_ok(session, "skill_kill_session", {"session_id": f" {session_id} "})

    assert started.result["output"] == "Ready? "
    assert quiet.result == {
        "status": "running",
        "session_id": session_id,
        "output": "",
        "offset": 7,
        "next_offset": 7,
    }
    assert killed.result == {"ok": True, "session_id": session_id, "status": "killed"}
    assert content(killed) == killed.result
    for tool in ("skill_poll_session", "skill_write_stdin", "skill_kill_session"):
        call_error(
            session,
            tool,
            {"session_id": session_id},
            "unknown_session",
            f"unknown session_id: {session_id}. Sessions: (none); start one with skill_exec"
            " (a killed session is gone).",
        )


def test_an_unknown_session_before_any_workspace_lists_no_sessions() -> None:
    session = SkillSession(example_repository(), exec_tools=True)
    call_error(
        session,
        "skill_poll_session",
        {"session_id": "abc"},
        "unknown_session",
        "unknown session_id: abc. Sessions: (none); start one with skill_exec"
        " (a killed session is gone).",
    )
    assert session.workspace is None


def test_argument_mistakes_are_error_results(session: SkillSession) -> None:
    call_error(
        session,
        "skill_write_stdin",
        {"session_id": "  "},
        "invalid_arguments",
        "session_id must not be empty; pass the session_id that skill_exec returned.",
    )
    call_error(
        session,
        "skill_poll_session",
        {},
        "invalid_arguments",
        "invalid arguments for tool 'skill_poll_session': 'session_id' is a required property.",
    )
    call_error(
        session,
        "skill_exec",
        {"skill": "interactive-greeter", "command": GREET, "yield_time_ms": -1},
        "invalid_arguments",
        "invalid arguments for tool 'skill_exec': yield_time_ms: -1 is less than the minimum of 0.",
    )
    call_error(
        session,
        "skill_exec",
        {"skill": "interactive-greeter", "command": GREET, "inputs": []},
        "invalid_arguments",
        "invalid arguments for tool 'skill_exec': Additional properties are not allowed"
        " ('inputs' was unexpected).",
    )
    call_error(
        session,
        "skill_exec",
        {"skill": "greeter", "command": GREET},
        "unknown_skill",
        f"unknown skill 'greeter'. Known skills: {', '.join(example_repository().names())}."
        " Call skill_list to see the skills.",
    )
    outcome = session.call(
        "skill_exec", {"skill": "interactive-greeter", "command": "pwd", "cwd": "/etc"}
    )
    assert outcome.error_code == "workspace_error"
    assert "outside the workspace" in outcome.result["message"]


def test_a_timeout_ends_the_wait_with_the_result(session: SkillSession) -> None:
    marker = unique_marker()
    result = exec_greeter(session, command=f"echo started; sleep {marker}", timeout=1)

    assert (result["status"], result["output"], result["exit_code"]) == ("exited", "started\n", -1)
    assert result["result"]["timed_out"] is True
    assert all_gone(marker)


def test_a_negative_timeout_is_the_default_timeout_and_the_answer_says_so(
    session: SkillSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for skill_run: bounded by the default timeout (shortened here to see it end)."""
    from pytest_agent_skills.workspace import requests as requests_module

    monkeypatch.setattr(requests_module, "DEFAULT_TIMEOUT_SECONDS", 1.0)
    marker = unique_marker()
    result = exec_greeter(session, command=f"echo started; sleep {marker}", timeout=-1)

    assert (result["status"], result["exit_code"], result["result"]["timed_out"]) == (
        "exited",
        -1,
        True,
    )
    assert result["warnings"][0] == "timeout -1 is below 0: taken as 0, the default timeout"
    assert all_gone(marker)


def test_closing_the_session_kills_its_processes(local: Runtime) -> None:
    marker = unique_marker()
    session = SkillSession(example_repository(), runtime=local, exec_tools=True)
    exec_greeter(session, command=f"sleep {marker} & printf 'Wait? '; read x")
    wait_for(lambda: processes_running(marker), "the session's sleep is running")

    session.close()

    assert all_gone(marker)


def _greeting_script() -> list[dict[str, Any]]:
    answer = {"session_id": FIRST, "submit": True, "yield_time_ms": YIELD_MS}
    return [
        {"call": "skill_load", "args": {"skill_name": "interactive-greeter"}},
        {
            "call": "skill_exec",
            "args": {
                "skill": "interactive-greeter",
                "command": GREET,
                "output_files": ["out/greeting.txt"],
                "yield_time_ms": YIELD_MS,
            },
        },
        {"call": "skill_write_stdin", "args": {**answer, "chars": "Ada"}},
        {"call": "skill_write_stdin", "args": {**answer, "chars": "1"}},
        {"say": "Greeted Ada."},
    ]


@pytest.mark.parametrize("transport", ["direct", "sdk"])
def test_a_scripted_model_answers_the_prompts(runtime: Runtime, transport: str) -> None:
    outcome = run_conversation(
        example_repository(),
        "Greet me; I am Ada and like red.",
        script=_greeting_script(),
        settings=RunSettings(runtime=runtime),
        transport=transport,
        exec_tools=True,
    )

    trajectory = outcome.trajectory
    results = [call.result for call in trajectory.calls]
    assert [call.name for call in trajectory.calls] == [
        "skill_load",
        "skill_exec",
        "skill_write_stdin",
        "skill_write_stdin",
    ]
    assert [r.get("status") for r in results[1:]] == ["running", "running", "exited"]
    assert results[3]["result"]["output_files"][0]["content"] == "Hello, Ada! You like red.\n"
    assert trajectory.files["out/greeting.txt"] == b"Hello, Ada! You like red.\n"
    assert "Use skill_exec only" in trajectory.requests[2].system
    assert set(EXEC_NAMES) <= set(trajectory.requests[2].tools)
    coverage = CoverageCollector()
    coverage.record(outcome.repository, trajectory)
    [greeter] = [e for e in coverage.to_json()["skills"] if e["name"] == "interactive-greeter"]
    assert greeter["scripts_ran"] == ["scripts/greet.py"]


def _suite(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(GREETER, pytester.path / "skills" / "interactive-greeter")
    return pytester


def _suite_under(
    pytester: pytest.Pytester, kind: str, tmp_path_factory: pytest.TempPathFactory
) -> pytest.Pytester:
    get_runtime(kind, tmp_path_factory.mktemp("probe"))  # skips (fails in CI) without its engine
    return _suite(pytester)


@pytest.mark.parametrize("kind", RUNTIME_PARAMS)
def test_a_scenario_file_drives_an_interactive_skill(
    pytester: pytest.Pytester, kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _suite_under(pytester, kind, tmp_path_factory)
    script = json.dumps(_greeting_script())
    (pytester.path / "greet.scenario.yaml").write_text(
        textwrap.dedent(
            f"""\
            skills: [skills]
            runtime: {kind}
            exec_tools: true
            user: Greet me; I am Ada and like red.
            model:
              script: {script}
            expect:
              results:
                - {{call: skill_exec, match: {{status: running, output: "Name? "}}}}
                - {{call: skill_write_stdin, index: 0, match: {{interaction: {{kind: selection}}}}}}
                - {{call: skill_write_stdin, index: 1, match: {{status: exited, exit_code: 0}}}}
              files:
                - {{path: out/greeting.txt, contains: "You like red"}}
            """
        )
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "scenario")

    result.assert_outcomes(passed=1)


def test_the_skill_agent_fixture_takes_exec_tools(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    pytester.makepyfile(
        test_agent=f"""
        def test_greets(skill_agent):
            trajectory = skill_agent.run(
                "Greet me.",
                skills="skills",
                exec_tools=True,
                script={_greeting_script()!r},
            )
            assert trajectory.files["out/greeting.txt"] == b"Hello, Ada! You like red.\\n"
        """
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "greets")

    result.assert_outcomes(passed=1)


def test_lax_argument_types_are_converted_as_for_every_tool(session: SkillSession) -> None:
    outcome = call_ok(
        session,
        "skill_exec",
        {"skill": "interactive-greeter", "command": GREET, "yield_time_ms": "60000", "tty": "no"},
    )
    answered = call_ok(
        session,
        "skill_write_stdin",
        {"session_id": FIRST, "chars": "Ada", "submit": "yes", "yield_time_ms": " 60000 "},
    )

    assert [(c.path, c.value) for c in outcome.coercions] == [
        (("yield_time_ms",), 60000),
        (("tty",), False),
    ]
    assert outcome.result["output"] == "Name? "
    assert answered.result["output"] == MENU
    assert [(c.path, c.value) for c in answered.coercions] == [
        (("submit",), True),
        (("yield_time_ms",), 60000),
    ]


def test_a_session_started_in_one_user_turn_is_answered_in_the_next(local: Runtime) -> None:
    answer = {"session_id": FIRST, "submit": True, "yield_time_ms": YIELD_MS}
    exec_arguments = {"skill": "interactive-greeter", "command": GREET, "yield_time_ms": YIELD_MS}
    turns = [
        {
            "user": "Greet me.",
            "script": [{"call": "skill_exec", "args": exec_arguments}, {"say": "Your name?"}],
        },
        {
            "user": "Ada; I like green.",
            "script": [
                {"call": "skill_write_stdin", "args": {**answer, "chars": "Ada"}},
                {"call": "skill_write_stdin", "args": {**answer, "chars": "2"}},
                {"say": "Done."},
            ],
        },
    ]

    outcome = run_conversation(
        example_repository(), turns=turns, settings=RunSettings(runtime=local), exec_tools=True
    )

    statuses = [call.result["status"] for call in outcome.trajectory.calls]
    assert statuses == ["running", "running", "exited"]
    assert outcome.trajectory.files["out/greeting.txt"] == b"Hello, Ada! You like green.\n"


def test_a_workspace_holds_a_bounded_number_of_sessions(
    session: SkillSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interactive, "MAX_SESSIONS", 2)
    for _ in range(2):
        exec_greeter(session, command="true")

    refused = session.call("skill_exec", {"skill": "interactive-greeter", "command": "true"})
    call_ok(session, "skill_kill_session", {"session_id": FIRST})
    again = exec_greeter(session, command="true")

    assert refused.result == {
        "error": "workspace_error",
        "message": "this workspace already holds 2 skill_exec sessions; end one with"
        " skill_kill_session before starting another",
        "status": "failed",
    }
    assert again["session_id"] == session_id_for(3)


SECOND = session_id_for(2)
WAITING = "printf 'Ready? '; read x; echo never"


def _every_tool_script() -> list[dict[str, Any]]:
    """Each of the four tools: a poll of a waiting program, its answers, then a second session
    killed and polled again (an unknown_session error result)."""
    answer = {"session_id": FIRST, "submit": True, "yield_time_ms": YIELD_MS}
    waiting = {"skill": "interactive-greeter", "command": WAITING, "yield_time_ms": YIELD_MS}
    return [
        {"call": "skill_load", "args": {"skill_name": "interactive-greeter"}},
        *_greeting_script()[1:2],
        {"call": "skill_poll_session", "args": {"session_id": FIRST, "yield_time_ms": 1}},
        {"call": "skill_write_stdin", "args": {**answer, "chars": "Ada"}},
        {"call": "skill_write_stdin", "args": {**answer, "chars": "2"}},
        {"call": "skill_exec", "args": waiting},
        {"call": "skill_kill_session", "args": {"session_id": SECOND}},
        {"call": "skill_poll_session", "args": {"session_id": SECOND}},
        {"say": "Greeted Ada."},
    ]


EVERY_TOOL_EXPECT = {
    "calls": {
        "mode": "exact",
        "args": "ignore",
        "items": [
            {"name": name}
            for name in (
                "skill_load",
                "skill_exec",
                "skill_poll_session",
                "skill_write_stdin",
                "skill_write_stdin",
                "skill_exec",
                "skill_kill_session",
                "skill_poll_session",
            )
        ],
    },
    "results": [
        {"call": "skill_exec", "index": 0, "match": {"status": "running", "output": "Name? "}},
        {
            "call": "skill_poll_session",
            "index": 0,
            "match": {"status": "running", "session_id": FIRST, "output": "", "offset": 6},
        },
        {"call": "skill_write_stdin", "index": 1, "match": {"status": "exited", "exit_code": 0}},
        {"call": "skill_exec", "index": 1, "match": {"session_id": SECOND, "output": "Ready? "}},
        {
            "call": "skill_kill_session",
            "match": {"ok": True, "session_id": SECOND, "status": "killed"},
        },
        {
            "call": "skill_poll_session",
            "index": 1,
            "is_error": True,
            "match": {"error": "unknown_session"},
        },
    ],
    "files": [{"path": "out/greeting.txt", "contains": "Hello, Ada! You like green."}],
}


@pytest.mark.parametrize("kind", RUNTIME_PARAMS)
def test_every_interactive_tool_in_a_scenario_and_through_skill_agent(
    pytester: pytest.Pytester, kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _suite_under(pytester, kind, tmp_path_factory)
    scenario = {
        "skills": ["skills"],
        "runtime": kind,
        "exec_tools": True,
        "user": "Greet me; I am Ada and like green.",
        "model": {"script": _every_tool_script()},
        "expect": EVERY_TOOL_EXPECT,
    }
    # JSON is YAML: the scenario file holds the same script and expectations as the test below.
    (pytester.path / "every.scenario.yaml").write_text(json.dumps(scenario, indent=1))
    pytester.makepyfile(
        test_agent=f"""
        def test_every_tool(skill_agent):
            trajectory = skill_agent.run(
                "Greet me; I am Ada and like green.",
                skills="skills",
                runtime={kind!r},
                exec_tools=True,
                script={_every_tool_script()!r},
                expect={EVERY_TOOL_EXPECT!r},
            )
            assert trajectory.files["out/greeting.txt"] == b"Hello, Ada! You like green.\\n"
        """
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "every")

    result.assert_outcomes(passed=2)
