"""Parity of the interactive tools with the reference (trpc-agent-py 1.2.0's skill_exec & co.).

``tests/reference/exec_oracle.py`` drives the reference's ``create_exec_tools`` in its own
virtualenv; the same calls go through our ``SkillSession(exec_tools=True)``.  Where the
reference works (prompts that end their line, menus, kill, unknown ids) the shapes, texts and
hints are compared; where it is broken, each divergence of docs/protocol.md's table is asserted
on both sides.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.protocol import SkillSession
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.workspace import create_runtime
from tests.support.interactive import GREETER
from tests.support.reference import REFERENCE_DIR, run_oracle

pytestmark = pytest.mark.reference

ORACLE = REFERENCE_DIR / "exec_oracle.py"
SESSION = "$session"
SKILL = "interactive-greeter"
#: Prompts that end their line: the reference shows them once (an unterminated one it repeats).
PROMPTS = (
    "printf 'Name?\\n'; read n; printf '1. red\\n2. blue\\nEnter the number:\\n'; read c;"
    ' echo "Hello $n, colour $c"; echo "$n $c" > "$OUTPUT_DIR/answer.txt"'
)
SECRET = "sk-parity-host-secret"
WAIT = 10_000


def exec_step(command: str, **extra: Any) -> dict[str, Any]:
    arguments = {"skill": SKILL, "command": command, "yield_time_ms": WAIT, **extra}
    return {"call": "skill_exec", "args": arguments}


def answer(chars: str) -> dict[str, Any]:
    arguments = {"session_id": SESSION, "chars": chars, "submit": True, "yield_time_ms": WAIT}
    return {"call": "skill_write_stdin", "args": arguments}


def session_call(name: str, session_id: str = SESSION) -> dict[str, Any]:
    return {"call": name, "args": {"session_id": session_id}}


SEQUENCES: dict[str, list[dict[str, Any]]] = {
    "answered": [
        exec_step(PROMPTS, output_files=["out/answer.txt"]),
        answer("Ada"),
        answer("2"),
        {"poll_until_exit": 40},
        session_call("skill_kill_session"),
        session_call("skill_poll_session"),
    ],
    "killed": [exec_step("printf 'Wait:\\n'; sleep 30"), session_call("skill_kill_session")],
    "unknown": [session_call("skill_poll_session", "nope"), session_call("skill_write_stdin", " ")],
    "unterminated_prompt": [
        exec_step("printf 'Name? '; read n; echo \"hi $n\"", yield_time_ms=1000),
        session_call("skill_kill_session"),
    ],
    "tool_set": [{"tool_names": True}],
    "cwd": [exec_step("pwd", cwd="/tmp"), {"poll_until_exit": 40}],
    "host_env": [exec_step('echo "${PARITY_API_KEY:-unset}"'), {"poll_until_exit": 40}],
    "timeout": [
        exec_step("echo started; sleep 4", timeout=1, yield_time_ms=2500),
        session_call("skill_kill_session"),
    ],
    "restrictions": [exec_step("id -u >/dev/null; echo ran"), {"poll_until_exit": 40}],
    "tty": [exec_step("echo a; echo b", tty=True), {"poll_until_exit": 40}],
}


@pytest.fixture(scope="module")
def roots() -> list[Path]:
    return [GREETER.parent]


@pytest.fixture(scope="module")
def theirs(roots: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    spec = {
        "roots": [str(root) for root in roots],
        "sequences": [
            {
                "id": name,
                "steps": steps,
                "allowed_cmds": ["echo"] if name == "restrictions" else None,
            }
            for name, steps in SEQUENCES.items()
        ],
    }
    scratch = tmp_path_factory.mktemp("exec-oracle")
    return run_oracle(ORACLE, spec, scratch, {"PARITY_API_KEY": SECRET})


@pytest.fixture
def ours(roots: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("PARITY_API_KEY", SECRET)
    runtime = create_runtime("local", work_root=tmp_path)

    def run(name: str) -> list[dict[str, Any]]:
        with SkillSession(SkillRepository(roots), runtime=runtime, exec_tools=True) as session:
            return _run_ours(session, SEQUENCES[name])

    yield run
    runtime.close()


def _run_ours(session: SkillSession, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    current = ""
    records: list[dict[str, Any]] = []
    for step in steps:
        if step.get("tool_names"):
            records.append(
                {"tool_names": [t["function"]["name"] for t in session.tool_definitions()]}
            )
        elif "poll_until_exit" in step:
            polls = []
            for _ in range(step["poll_until_exit"]):
                polls.append(session.call("skill_poll_session", {"session_id": current}).result)
                if polls[-1].get("status") != "running":
                    break
            records.append({"polls": polls})
        else:
            arguments = {k: current if v == SESSION else v for k, v in step["args"].items()}
            result = session.call(step["call"], arguments).result
            if step["call"] == "skill_exec" and "session_id" in result:
                current = result["session_id"]
            records.append({"call": step["call"], "result": result})
    return records


def _after_answers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last answer's result and the polls after it (where the exit shows, on either side)."""
    return [records[2]["result"], *records[3]["polls"]]


def _run_result(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``result`` of an exec that ran to its end: in the exec's answer or a later poll."""
    answers = [records[0]["result"], *records[1]["polls"]]
    [result] = [answer["result"] for answer in answers if "result" in answer]
    return result


def _lines(outputs: list[str]) -> list[str]:
    """The output lines of several chunks (the reference drops each chunk's last newline)."""
    return "\n".join(output.removesuffix("\n") for output in outputs if output).splitlines()


# --- where the reference works: the same shapes, texts and hints ------------------------------


def test_an_answered_session_has_the_reference_shapes_and_hints(theirs, ours) -> None:
    reference, mine = theirs["answered"], ours("answered")

    for step in (0, 1):
        assert set(mine[step]["result"]) == set(reference[step]["result"])
        for key in ("status", "interaction"):
            assert mine[step]["result"][key] == reference[step]["result"][key], (step, key)
        their_output, my_output = (
            reference[step]["result"]["output"],
            mine[step]["result"]["output"],
        )
        assert my_output.removesuffix("\n") == their_output
    assert reference[0]["result"]["interaction"] == {
        "needs_input": True,
        "kind": "prompt",
        "hint": "Name?",
    }
    assert reference[1]["result"]["interaction"]["kind"] == "selection"
    for records in (reference, mine):
        assert uuid.UUID(records[0]["result"]["session_id"]).version == 4
        assert records[0]["result"]["offset"] == 0 < records[0]["result"]["next_offset"]
    their_end, my_end = _after_answers(reference), _after_answers(mine)
    assert _lines([r["output"] for r in my_end]) == _lines([r["output"] for r in their_end])
    assert [r["status"] for r in (their_end[-1], my_end[-1])] == ["exited", "exited"]
    [their_result] = [r["result"] for r in their_end if "result" in r]
    [my_result] = [r["result"] for r in my_end if "result" in r]
    assert set(their_result) <= set(my_result)
    for key in ("stdout", "stderr", "exit_code", "timed_out"):
        assert my_result[key] == their_result[key], key
    assert my_result["stdout"] == "Name?\n1. red\n2. blue\nEnter the number:\nHello Ada, colour 2\n"


def test_kill_and_unknown_session_answers_match(theirs, ours) -> None:
    answered, mine = theirs["answered"], ours("answered")
    their_id, my_id = answered[0]["result"]["session_id"], mine[0]["result"]["session_id"]

    assert answered[4]["result"] == {"ok": True, "session_id": their_id, "status": "exited"}
    assert mine[4]["result"] == {"ok": True, "session_id": my_id, "status": "exited"}
    assert answered[5]["result"]["message"] == f"unknown session_id: {their_id}"
    assert mine[5]["result"]["message"].startswith(f"unknown session_id: {my_id}. ")
    killed, my_killed = theirs["killed"], ours("killed")
    assert killed[1]["result"]["status"] == my_killed[1]["result"]["status"] == "killed"
    assert my_killed[0]["result"]["interaction"] == killed[0]["result"]["interaction"]
    unknown, my_unknown = theirs["unknown"], ours("unknown")
    assert unknown[0]["result"]["message"] == "unknown session_id: nope"
    assert my_unknown[0]["result"]["message"].startswith("unknown session_id: nope. ")


# --- where the reference is broken: each divergence, on both sides ----------------------------


def test_output_files_are_collected_where_the_reference_returns_none(theirs, ours) -> None:
    [their_result] = [r["result"] for r in _after_answers(theirs["answered"]) if "result" in r]
    [my_result] = [r["result"] for r in _after_answers(ours("answered")) if "result" in r]

    assert their_result["output_files"] == []
    assert [(f["name"], f["content"]) for f in my_result["output_files"]] == [
        ("out/answer.txt", "Ada 2\n")
    ]


def test_an_unterminated_prompt_is_shown_once(theirs, ours) -> None:
    their_output = theirs["unterminated_prompt"][0]["result"]["output"]
    mine = ours("unterminated_prompt")[0]["result"]

    assert their_output.count("Name? ") > 1  # repeated on each of its 50 ms polls
    assert (mine["output"], mine["next_offset"]) == ("Name? ", 6)
    assert theirs["unterminated_prompt"][0]["result"]["next_offset"] == 0


def test_the_tool_set_offers_the_tools_that_answer_skill_exec(theirs, ours) -> None:
    [theirs_offered] = theirs["tool_set"]
    [mine_offered] = ours("tool_set")

    assert "skill_exec" in theirs_offered["tool_names"]
    assert "skill_write_stdin" not in theirs_offered["tool_names"]
    assert "skill_poll_session" not in theirs_offered["tool_names"]
    assert {"skill_exec", "skill_write_stdin", "skill_poll_session", "skill_kill_session"} <= set(
        mine_offered["tool_names"]
    )


def test_the_run_rules_hold_where_the_reference_skips_them(theirs, ours) -> None:
    their_cwd = _run_result(theirs["cwd"])["stdout"]
    their_env = _run_result(theirs["host_env"])["stdout"]
    their_restricted = _run_result(theirs["restrictions"])["stdout"]
    my_cwd = ours("cwd")[0]["result"]
    my_env = ours("host_env")[0]["result"]

    assert their_cwd == "/tmp\n"  # the host folder: cwd is not confined
    assert my_cwd["error"] == "workspace_error" and "outside the workspace" in my_cwd["message"]
    assert their_env == f"{SECRET}\n"  # the host environment reaches the command
    assert my_env["output"] == "unset\n"
    assert "ran" in their_restricted  # allowed_cmds=["echo"] did not stop 'id -u'


def test_a_timeout_ends_the_session_where_the_reference_keeps_it_running(theirs, ours) -> None:
    their_exec = theirs["timeout"][0]["result"]
    mine = ours("timeout")[0]["result"]

    assert their_exec["status"] == "running"  # 2.5 s after a 1 s timeout
    assert (mine["status"], mine["exit_code"], mine["result"]["timed_out"]) == ("exited", -1, True)
    assert mine["output"] == their_exec["output"] + "\n" == "started\n"


def test_a_blank_session_id_is_refused_in_our_words(theirs, ours) -> None:
    their_blank = theirs["unknown"][1]["result"]
    my_blank = ours("unknown")[1]["result"]

    assert their_blank["message"] == "session_id is required"
    assert my_blank == {
        "error": "invalid_arguments",
        "message": "session_id must not be empty; pass the session_id that skill_exec returned.",
        "status": "failed",
    }


def test_a_terminal_keeps_its_line_ends_in_the_result_stdout(theirs, ours) -> None:
    """With tty=true the command writes to a terminal, which ends lines with \\r\\n: the
    result's stdout keeps them (the bytes as written), 1.2.0's has \\n; what the model reads
    while it runs (output) has \\n on both sides."""
    their_result = _run_result(theirs["tty"])
    mine = ours("tty")
    my_result = _run_result(mine)

    assert their_result["stdout"] == "a\nb\n"
    assert my_result["stdout"] == "a\r\nb\r\n"
    assert mine[0]["result"]["output"] == "a\nb\n"
    assert theirs["tty"][0]["result"]["output"] == "a\nb"
