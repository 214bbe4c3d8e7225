"""The agent loop and the scripted model: exhausted and unused scripts, the turn limit,
callable scripts, and model mistakes that must not crash a run."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_agent_skills.harness import (
    TRANSPORTS,
    ModelTurn,
    ScriptExhaustedError,
    ToolCall,
    TurnLimitError,
    UnusedTurnsError,
    run_conversation,
)
from pytest_agent_skills.repository import SkillRepository
from tests.support.harness import SKILLS

REPOSITORY = SkillRepository([SKILLS])


def converse(script: Any, **kwargs: Any):
    return run_conversation(REPOSITORY, "Hello.", script=script, **kwargs)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_script_that_runs_out_names_the_turn(transport) -> None:
    script = [{"call": "skill_list"}]
    with pytest.raises(ScriptExhaustedError) as caught:
        converse(script, transport=transport)
    assert str(caught.value) == (
        "script exhausted: the model was asked for turn 1 but the script has only 1 turn(s); the"
        " last one was: call skill_list({}). End the script with a final turn {say: ...} or add"
        " the missing turns."
    )
    assert caught.value.trajectory.call_names == ["skill_list"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_turns_left_after_the_final_text_are_a_failure(transport) -> None:
    script = [{"say": "Bye."}, {"call": "skill_list"}, {"say": "Again."}]
    with pytest.raises(UnusedTurnsError) as caught:
        converse(script, transport=transport)
    assert str(caught.value) == (
        "unused turns: the conversation ended after turn 0 but the script has 2 more:\n"
        "  turn 1: call skill_list({})\n"
        "  turn 2: say 'Again.'\n"
        "Remove them, or find out why the conversation ended early (a final text turn ends it)."
    )
    assert converse(script, transport=transport, allow_unused=True).trajectory.final == "Bye."


def test_a_runaway_loop_stops_at_the_turn_limit() -> None:
    def forever(request: dict[str, Any], turn: int) -> dict[str, Any]:
        return {"call": "skill_list"}

    with pytest.raises(TurnLimitError) as caught:
        converse(forever, max_turns=3)
    assert str(caught.value) == (
        "turn limit: the model made 3 turns with tool calls and never answered with a final text"
        " turn (a runaway loop?). Raise max_turns if the conversation really needs more turns."
    )
    assert len(caught.value.trajectory.turns) == 3


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_callable_script_sees_each_request_and_earlier_results(transport) -> None:
    seen: list[dict[str, Any]] = []

    def model(request: dict[str, Any], turn: int) -> Any:
        seen.append(request)
        if turn == 0:
            return {"call": "skill_list_docs", "args": {"skill_name": "notes"}}
        docs = request["messages"][-1]["content"]
        return {"say": f"Docs: {docs}"}

    trajectory = converse(model, transport=transport).trajectory
    assert (
        trajectory.final == 'Docs: {"result": ["docs/glossary.md", "docs/style.md",'
        ' "scripts/count.sh"]}'
    )
    assert [sorted(request) for request in seen] == [["messages", "model", "tools"]] * 2
    assert seen[0]["messages"][0]["role"] == "system"
    assert "Available skills:" in seen[0]["messages"][0]["content"]


def test_a_callable_may_answer_with_a_model_turn_or_end_with_none() -> None:
    def model(request: dict[str, Any], turn: int) -> Any:
        if turn == 0:
            return ModelTurn(None, (ToolCall("x1", "skill_list", "{}"),))
        return None

    with pytest.raises(ScriptExhaustedError) as caught:
        converse(model)
    assert str(caught.value).startswith("the script function returned None for model turn 1")
    assert caught.value.trajectory.call_names == ["skill_list"]


def test_model_mistakes_become_error_results_not_crashes() -> None:
    script = [
        {
            "calls": [
                {"call": "no_such_tool", "args": {}},
                {"call": "skill_load", "args": "[1, 2]"},
                {"call": "skill_load", "args": {"skill_name": "notes", "extra": 1}},
                {"call": "skill_load", "args": "[" * 100_000},
            ]
        },
        {"say": "Sorry."},
    ]
    trajectory = converse(script).trajectory
    results = [(call.is_error, call.result["error"]) for call in trajectory.calls]
    assert results == [
        (True, "unknown_tool"),
        (True, "invalid_arguments"),
        (True, "invalid_arguments"),
        (True, "invalid_arguments"),
    ]
    assert trajectory.calls[1].arguments is None
    assert trajectory.final == "Sorry."


def test_the_trajectory_records_requests_state_and_files() -> None:
    script = [
        {"call": "skill_load", "args": {"skill_name": "notes"}},
        {"call": "skill_run", "args": {"skill": "notes", "command": "echo hi > $OUTPUT_DIR/a.txt"}},
        {"say": "ok"},
    ]
    trajectory = converse(script, inputs={"in.txt": "x"}).trajectory
    assert len(trajectory.requests) == 3
    assert "[Loaded] notes" not in trajectory.requests[0].system
    assert "[Loaded] notes" in trajectory.requests[1].system
    assert trajectory.calls[0].state_delta["temp:skill:loaded:notes"] == "1"
    assert trajectory.state["temp:skill:loaded:notes"] == "1"
    assert trajectory.files == {"out/a.txt": b"hi\n", "work/inputs/in.txt": b"x"}
    shown = trajectory.format().splitlines()
    assert shown[0] == "Trajectory: 3 model turn(s), 2 tool call(s)"
    assert '    call skill_load {"skill_name": "notes"}' in shown
    assert "      state temp:skill:loaded:notes = 1" in shown
    assert "    say ok" in shown
    assert shown[-1] == "  files: out/a.txt (3 B), work/inputs/in.txt (1 B)"


def test_captured_files_are_regular_files_in_path_order_never_through_a_link(tmp_path) -> None:
    from pytest_agent_skills.harness.trajectory import capture_files

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("no")
    root = tmp_path / "ws"
    for name, text in {
        "out/b.txt": "b",
        "out/a/z.txt": "z",
        "out/a-c.txt": "ac",
        "work/inputs/in.txt": "x",
        "skills/notes/SKILL.md": "staged",
        "runs/run_1/stdout": "log",
        "metadata.json": "{}",
        "out/runs/kept.txt": "k",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "out" / "linked").symlink_to(outside, target_is_directory=True)
    (root / "out" / "secret.txt").symlink_to(outside / "secret.txt")
    (root / "out" / "pipe").mkdir()
    assert list(capture_files(root).items()) == [
        ("out/a/z.txt", b"z"),
        ("out/a-c.txt", b"ac"),
        ("out/b.txt", b"b"),
        ("out/runs/kept.txt", b"k"),
        ("work/inputs/in.txt", b"x"),
    ]


def test_files_deeper_than_the_recursion_limit_are_captured(tmp_path) -> None:
    # A runaway command may nest folders without end.
    from pytest_agent_skills.harness.trajectory import capture_files
    from tests.support.stack import recursion_limit

    root = tmp_path / "ws"
    deepest = root.joinpath("out", *["a"] * 300)
    deepest.mkdir(parents=True)
    (deepest / "f.txt").write_text("deep")
    (root / "out" / "top.txt").write_text("top")
    with recursion_limit(100):
        files = capture_files(root)

    assert files == {"/".join(["out", *["a"] * 300, "f.txt"]): b"deep", "out/top.txt": b"top"}


def test_a_file_swapped_after_the_walk_is_read_only_while_still_a_regular_file(tmp_path) -> None:
    """A still-running exec session may swap a captured file for a named pipe (whose open would
    block forever) or a link out of the workspace between the walk and the read."""
    from pytest_agent_skills.files import read_head_if_regular

    regular = tmp_path / "report.txt"
    regular.write_text("kept")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    secret = tmp_path / "secret.txt"
    secret.write_text("no")
    link = tmp_path / "link.txt"
    link.symlink_to(secret)
    assert read_head_if_regular(str(regular), 100) == b"kept"
    assert read_head_if_regular(str(pipe), 100) is None
    assert read_head_if_regular(str(link), 100) is None
    assert read_head_if_regular(str(tmp_path / "gone.txt"), 100) is None


def test_a_captured_file_is_read_up_to_the_limit(tmp_path) -> None:
    from pytest_agent_skills.files import read_head_if_regular

    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 1000)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert read_head_if_regular(str(big), 200_000) == (bytes(range(256)) * 1000)[:200_000]
    assert read_head_if_regular(str(big), 300_000) == bytes(range(256)) * 1000
    assert read_head_if_regular(str(empty), 100) == b""
