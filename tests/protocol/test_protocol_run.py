"""skill_run through the session on the example skills, with the real local runtime."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.protocol import SkillSession
from pytest_agent_skills.workspace import Runtime, create_runtime
from tests.support.protocol import call_error, call_ok, content, example_repository

CSV = "name,score\nada,3\nbob,5\n"


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    runtime = create_runtime("local", work_root=tmp_path)
    yield runtime
    runtime.close()


@pytest.fixture
def session(runtime: Runtime) -> Iterator[SkillSession]:
    with SkillSession(
        example_repository(), runtime=runtime, session_id="run-tests", inputs={"scores.csv": CSV}
    ) as session:
        yield session


def test_python_skill_reads_inputs_and_returns_output_files(session):
    assert session.workspace is None
    outcome = call_ok(
        session,
        "skill_run",
        {
            "skill": "csv-summary",
            "command": "python3 scripts/summarize.py",
            "output_files": ["$OUTPUT_DIR/summary.*"],
        },
    )
    result = outcome.result
    assert (result["exit_code"], result["timed_out"], result["stderr"]) == (0, False, "")
    assert [f["name"] for f in result["output_files"]] == ["out/summary.json", "out/summary.txt"]
    summary = json.loads(result["output_files"][0]["content"])
    assert summary[0]["rows"] == 2
    assert summary[0]["numeric"]["score"] == {"min": 3.0, "max": 5.0, "mean": 4.0}
    assert outcome.state_delta == {}
    assert session.workspace is not None
    assert (session.workspace.path / "work/inputs/scores.csv").read_text() == CSV
    assert content(outcome) == result


def test_failing_command_is_a_result_not_an_error(session, tmp_path):
    outcome = call_ok(
        session,
        "skill_run",
        {"skill": "csv-summary", "command": "python3 scripts/summarize.py --input empty-dir"},
    )
    assert outcome.result["exit_code"] == 2
    assert outcome.result["stderr"].strip()


def test_binary_output_is_never_inlined(session):
    outcome = call_ok(
        session,
        "skill_run",
        {
            "skill": "bar-chart",
            "command": "python3 scripts/chart.py apples=3 pears=5",
            "output_files": ["out/chart.*"],
        },
    )
    (chart,) = outcome.result["output_files"]
    assert (chart["name"], chart["mime_type"], chart["content"]) == (
        "out/chart.png",
        "image/png",
        "",
    )
    assert (session.workspace.path / "out/chart.png").read_bytes().startswith(b"\x89PNG")


def test_timeout_is_reported_in_the_result(session):
    outcome = call_ok(
        session,
        "skill_run",
        {"skill": "slow-and-chatty", "command": "bash scripts/slow.sh 30", "timeout": 1},
    )
    assert outcome.result["timed_out"] is True
    assert "started" in outcome.result["stdout"]


def test_session_and_call_environment_reach_the_command(runtime):
    with SkillSession(
        example_repository(), runtime=runtime, env={"A": "session", "B": "session"}
    ) as s:
        outcome = call_ok(
            s,
            "skill_run",
            {"skill": "release-notes", "command": 'echo "$A $B $SKILL_NAME"', "env": {"B": "call"}},
        )
    assert outcome.result["stdout"] == "session call release-notes\n"


def test_load_stages_into_an_existing_workspace(session):
    call_ok(session, "skill_run", {"skill": "csv-summary", "command": "true"})
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    assert (session.workspace.path / "skills/weather-tools/SKILL.md").is_file()


def test_workspace_refusal_is_an_error_result(session):
    outcome = session.call("skill_run", {"skill": "csv-summary", "command": "pwd", "cwd": "/etc"})
    assert outcome.error_code == "workspace_error"
    assert "outside the workspace" in outcome.result["message"]


def test_run_argument_errors(session):
    call_error(
        session,
        "skill_run",
        {"skill": "nope", "command": "true"},
        "unknown_skill",
        f"unknown skill 'nope'. Known skills: {', '.join(example_repository().names())}."
        " Call skill_list to see the skills.",
    )
    call_error(
        session,
        "skill_run",
        {"skill": " ", "command": "true"},
        "invalid_arguments",
        "skill must not be empty; pass a skill name from the 'Available skills' list.",
    )
    call_error(
        session,
        "skill_run",
        {"skill": "csv-summary", "command": ""},
        "invalid_arguments",
        "invalid arguments for tool 'skill_run': command: '' should be non-empty.",
    )
    call_error(
        session,
        "skill_run",
        {"skill": "csv-summary", "command": "true", "timeout": 1.5},
        "invalid_arguments",
        "invalid arguments for tool 'skill_run': timeout: 1.5 is not of type 'integer'.",
    )


@pytest.mark.parametrize("timeout", [-1, "-5"])
def test_a_negative_timeout_is_the_default_timeout_and_the_result_says_so(
    session, monkeypatch, timeout
):
    """As the reference's max(0, timeout): the command runs, bounded by the default timeout
    (shortened here to see it end), never unbounded."""
    from pytest_agent_skills.workspace import requests as requests_module

    monkeypatch.setattr(requests_module, "DEFAULT_TIMEOUT_SECONDS", 1.0)
    outcome = call_ok(
        session,
        "skill_run",
        {"skill": "csv-summary", "command": "echo started; sleep 30", "timeout": timeout},
    )
    assert outcome.result["timed_out"] is True
    assert outcome.result["stdout"] == "started\n"
    shown = json.dumps(timeout)
    assert outcome.result["warnings"][0] == (
        f"timeout {shown} is below 0: taken as 0, the default timeout"
    )
    assert [c.describe() for c in outcome.coercions] == [f"timeout: {shown} -> 0"]
    with SkillSession(example_repository(), lax_arguments=False) as strict:
        call_error(
            strict,
            "skill_run",
            {"skill": "csv-summary", "command": "true", "timeout": -1},
            "invalid_arguments",
            "invalid arguments for tool 'skill_run': timeout: -1 is less than the minimum of 0.",
        )


def test_close_removes_the_workspace(runtime):
    session = SkillSession(example_repository(), runtime=runtime)
    call_ok(session, "skill_run", {"skill": "release-notes", "command": "true"})
    path = session.workspace.path
    session.close()
    assert session.workspace is None
    assert not path.exists()


def test_without_a_runtime_a_local_one_is_created_and_closed():
    session = SkillSession(example_repository())
    outcome = call_ok(session, "skill_run", {"skill": "release-notes", "command": "echo hi"})
    assert outcome.result["stdout"] == "hi\n"
    path = session.workspace.path
    session.close()
    assert not path.exists()


def test_a_staging_refusal_during_load_is_an_error_result(session):
    call_ok(session, "skill_run", {"skill": "csv-summary", "command": "true"})
    session.workspace.close()
    outcome = session.call("skill_load", {"skill_name": "weather-tools"})
    assert outcome.error_code == "workspace_error"
    assert outcome.result["message"] == f"workspace {session.workspace.path} is closed"
    assert outcome.state_delta == {}
    assert session.loaded_skills() == []


def test_the_first_command_reads_a_metadata_json_naming_its_skill(session):
    """The session's workspace writes metadata.json once for its creation and the staging
    of the first skill: before the command starts."""
    outcome = call_ok(
        session,
        "skill_run",
        {"skill": "csv-summary", "command": 'cat "$WORKSPACE_DIR/metadata.json"'},
    )

    metadata = json.loads(outcome.result["stdout"])
    assert list(metadata["skills"]) == ["csv-summary"]
    assert [item["dst"] for item in metadata["inputs"]] == ["work/inputs/scores.csv"]


def test_a_first_call_refused_by_the_workspace_still_leaves_its_metadata_json(tmp_path):
    with (
        create_runtime("local", work_root=tmp_path, keep_workspaces=True) as runtime,
        SkillSession(example_repository(), runtime=runtime) as session,
    ):
        call_error(
            session,
            "skill_run",
            {"skill": "csv-summary", "command": "true", "output_files": ["out/\0"]},
            "workspace_error",
            "output_files pattern 'out/\\x00' must not contain NUL bytes",
        )
        assert session.workspace is not None
        metadata = json.loads((session.workspace.path / "metadata.json").read_text())

    assert (metadata["version"], metadata["skills"], metadata["inputs"]) == (1, {}, [])
    assert (session.workspace is None) and not any(tmp_path.glob("*/.metadata.tmp"))


@pytest.mark.parametrize("keep", [False, True], ids=["removed", "kept"])
def test_a_workspace_closed_by_another_thread_as_the_first_call_made_it(
    tmp_path: Path, keep: bool
) -> None:
    """The close wins the race against the call's staging: the call is refused as for any
    closed workspace (an error result, not an exception), no metadata.json is written into
    a removed workspace, and a kept one has its metadata.json."""
    import threading

    from pytest_agent_skills.workspace.local import LocalRuntime

    class ClosedAtOnce(LocalRuntime):
        def create_workspace(self, session_id: str, **options: Any) -> Any:
            workspace = super().create_workspace(session_id, **options)
            closer = threading.Thread(target=workspace.close)
            closer.start()
            closer.join()
            return workspace

    with (
        ClosedAtOnce(work_root=tmp_path, keep_workspaces=keep) as runtime,
        SkillSession(example_repository(), runtime=runtime) as session,
    ):
        outcome = session.call("skill_run", {"skill": "csv-summary", "command": "true"})
        assert session.workspace is not None
        closed = f"workspace {session.workspace.path} is closed"

    assert (outcome.is_error, outcome.result) == (
        True,
        {"error": "workspace_error", "message": closed, "status": "failed"},
    )
    kept = sorted(path.name for path in tmp_path.glob("*/*"))
    assert kept == (["home", "metadata.json", "out", "runs", "skills", "work"] if keep else [])
