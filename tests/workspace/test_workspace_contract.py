"""The behaviour contract of ``Workspace.run``, the same for the local, sandbox and docker runtimes.

Every test runs once per runtime; a skill passes or fails the same way in each.
"""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import (
    INLINE_FILE_CAP_BYTES,
    STREAM_CAP_BYTES,
    Workspace,
    WorkspacePathError,
)
from tests.support.workspace import make_skill, runtime, skill, work_root, workspace  # noqa: F401

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def test_runs_bash_in_the_skill_root_with_the_workspace_environment(
    workspace: Workspace, skill: Skill
) -> None:
    result = workspace.run(skill, "bash scripts/hello.sh world; pwd; env", output_files=[])

    lines = result.stdout.splitlines()
    assert result.exit_code == 0, result.stderr
    assert lines[0] == "hello world"
    assert lines[1] == str(workspace.path / "skills" / "demo")
    env = dict(line.split("=", 1) for line in lines[2:] if "=" in line)
    assert env["WORKSPACE_DIR"] == str(workspace.path)
    assert env["SKILLS_DIR"] == str(workspace.path / "skills")
    assert env["WORK_DIR"] == str(workspace.path / "work")
    assert env["OUTPUT_DIR"] == str(workspace.path / "out")
    assert env["SKILL_NAME"] == "demo"
    assert env["HOME"] == str(workspace.path / "home")
    assert Path(env["RUN_DIR"]).parent == workspace.path / "runs"
    assert Path(env["RUN_DIR"]) == result.run_dir


def test_layout_and_metadata_match_the_reference(workspace: Workspace, skill: Skill) -> None:
    workspace.run(skill, "true")

    assert workspace.path.name.startswith("ws_")
    for folder in ("skills/demo", "work/inputs", "out", "runs"):
        assert (workspace.path / folder).is_dir(), folder
    staged = workspace.path / "skills" / "demo"
    assert {
        p.name: str(p.readlink()) for p in staged.iterdir() if p.name in ("out", "work", "inputs")
    } == {
        "out": "../../out",
        "work": "../../work",
        "inputs": "../../work/inputs",
    }
    metadata = json.loads((workspace.path / "metadata.json").read_text())
    assert metadata["version"] == 1
    assert metadata["skills"]["demo"]["rel_path"] == "skills/demo"
    # The local runtime copies: its commands could write through links into the user's folder.
    expected_mode = "copy" if workspace.runtime.name == "local" else "link"
    assert metadata["skills"]["demo"]["mode"] == expected_mode


def test_failure_keeps_stdout_stderr_and_exit_code(workspace: Workspace, skill: Skill) -> None:
    result = workspace.run(skill, "echo out; echo err >&2; exit 3")

    assert (result.stdout, result.stderr, result.exit_code, result.timed_out) == (
        "out\n",
        "err\n",
        3,
        False,
    )
    assert not result.ok


def test_explicit_env_is_passed_and_overrides(workspace: Workspace, skill: Skill) -> None:
    result = workspace.run(
        skill, 'echo "$GREETING/$SKILL_NAME"', env={"GREETING": "hi", "SKILL_NAME": "renamed"}
    )

    assert result.stdout == "hi/renamed\n"


def test_stdin_is_passed_and_empty_stdin_is_eof(workspace: Workspace, skill: Skill) -> None:
    assert workspace.run(skill, "tr a-z A-Z", stdin="shout\n").stdout == "SHOUT\n"
    started = time.monotonic()
    result = workspace.run(skill, "cat; echo done", timeout=20)
    assert (result.stdout, result.timed_out) == ("done\n", False)
    assert time.monotonic() - started < 10


def test_inputs_are_visible_under_work_inputs_and_the_inputs_link(
    workspace: Workspace, skill: Skill
) -> None:
    workspace.put_inputs({"data.csv": b"a,b\n1,2\n", "sub/note.txt": "note"})

    result = workspace.run(skill, 'cat inputs/data.csv "$WORK_DIR/inputs/sub/note.txt"')

    assert result.stdout == "a,b\n1,2\nnote"


def test_text_binary_and_recursive_output_files(workspace: Workspace, skill: Skill) -> None:
    workspace.put_inputs({"pic.png": PNG})
    command = (
        "mkdir -p out/deep && echo '{\"k\": 1}' > out/deep/r.json && echo hi > out/a.txt"
        " && cp inputs/pic.png out/pic.png && printf 'x\\0y' > out/blob && echo h > out/.hidden"
    )

    result = workspace.run(skill, command, output_files=["out/*", "$OUTPUT_DIR/**/*.json"])

    files = {f.name: f for f in result.output_files}
    assert sorted(files) == ["out/a.txt", "out/blob", "out/deep/r.json", "out/pic.png"]
    assert (files["out/a.txt"].content, files["out/a.txt"].mime_type) == ("hi\n", "text/plain")
    assert files["out/deep/r.json"].mime_type == "application/json"
    assert json.loads(files["out/deep/r.json"].content) == {"k": 1}
    png = files["out/pic.png"]
    assert (png.mime_type, png.content, png.size_bytes, png.is_text) == (
        "image/png",
        "",
        len(PNG),
        False,
    )
    assert png.read_bytes() == PNG
    assert (files["out/blob"].mime_type, files["out/blob"].content) == (
        "application/octet-stream",
        "",
    )
    assert result.warnings == ()


def test_outputs_through_the_skill_out_link_are_reported_once(
    workspace: Workspace, skill: Skill
) -> None:
    result = workspace.run(
        skill, "echo x > out/one.txt", output_files=["out/*.txt", "skills/demo/out/*.txt"]
    )

    assert [f.name for f in result.output_files] == ["out/one.txt"]


def test_large_text_output_is_inlined_up_to_the_cap(workspace: Workspace, skill: Skill) -> None:
    size = INLINE_FILE_CAP_BYTES + 1000
    result = workspace.run(
        skill, f"head -c {size} /dev/zero | tr '\\0' a > out/big.txt", output_files=["out/big.txt"]
    )

    (big,) = result.output_files
    assert (big.size_bytes, big.truncated, len(big.content)) == (size, True, INLINE_FILE_CAP_BYTES)
    assert f"inline content cut at {INLINE_FILE_CAP_BYTES} bytes" in " ".join(result.warnings)


def test_artifacts_keep_real_bytes_and_inline_content_can_be_omitted(
    workspace: Workspace, skill: Skill
) -> None:
    workspace.put_inputs({"pic.png": PNG})
    result = workspace.run(
        skill,
        "cp inputs/pic.png out/pic.png; echo text > out/t.txt",
        output_files=["out/*"],
        save_as_artifacts=True,
        omit_inline_content=True,
    )

    assert [(a.name, a.version) for a in result.artifact_files] == [
        ("out/pic.png", 0),
        ("out/t.txt", 0),
    ]
    assert all(f.content == "" for f in result.output_files)
    assert (workspace.path / "artifacts" / "0" / "out" / "pic.png").read_bytes() == PNG
    assert result.to_dict()["artifact_files"] == [
        {"name": "out/pic.png", "version": 0},
        {"name": "out/t.txt", "version": 0},
    ]


def test_empty_outputs_of_a_failed_command_are_dropped_with_a_warning(
    workspace: Workspace, skill: Skill
) -> None:
    result = workspace.run(skill, "missing-command > out/r.txt", output_files=["out/*"])

    assert result.exit_code == 127
    assert result.output_files == ()
    assert "empty output_files omitted because command failed" in result.warnings[0]


def test_stdout_is_capped_and_flagged(workspace: Workspace, skill: Skill) -> None:
    result = workspace.run(skill, "head -c 100000 /dev/zero | tr '\\0' a; echo e >&2")

    assert (len(result.stdout), result.stdout_truncated, result.stdout_bytes) == (
        STREAM_CAP_BYTES,
        True,
        100000,
    )
    assert (result.stderr, result.stderr_truncated) == ("e\n", False)
    assert f"stdout truncated: kept {STREAM_CAP_BYTES} of 100000 bytes" in result.warnings


def test_non_utf8_output_is_not_a_failure(workspace: Workspace, skill: Skill) -> None:
    result = workspace.run(skill, "printf 'ok \\377\\n'")

    assert (result.exit_code, result.stdout) == (0, "ok \ufffd\n")
    assert "stdout is not valid UTF-8; invalid bytes shown as U+FFFD" in result.warnings


def test_timeout_keeps_partial_output_and_reports(workspace: Workspace, skill: Skill) -> None:
    started = time.monotonic()
    result = workspace.run(skill, "echo partial; sleep 30", timeout=1)

    assert (result.timed_out, result.exit_code, result.stdout) == (True, -1, "partial\n")
    assert time.monotonic() - started < 10
    assert result.warnings[0].startswith("command timed out after")


def test_cwd_inside_the_workspace_and_refused_outside(workspace: Workspace, skill: Skill) -> None:
    assert (
        workspace.run(skill, "pwd", cwd="scripts").stdout.strip().endswith("/skills/demo/scripts")
    )
    assert workspace.run(skill, "pwd", cwd="$WORK_DIR/sub").stdout == f"{workspace.path}/work/sub\n"
    for outside in ("../../..", "/tmp", "$WORK_DIR/../.."):
        with pytest.raises(WorkspacePathError, match="outside the workspace"):
            workspace.run(skill, "pwd", cwd=outside)


def test_restages_when_the_source_changes(workspace: Workspace, tmp_path: Path) -> None:
    source = make_skill(tmp_path / "skills")
    assert workspace.run(source, "cat data.txt").exit_code == 1

    (source.directory / "data.txt").write_text("fresh")
    assert workspace.run(source, "cat data.txt").stdout == "fresh"


def test_a_second_skill_in_the_same_workspace(workspace: Workspace, tmp_path: Path) -> None:
    first = make_skill(tmp_path / "skills", "first")
    second = make_skill(tmp_path / "skills", "second", {"scripts/hello.sh": 'echo "second $1"\n'})

    assert workspace.run(first, "bash scripts/hello.sh a > out/a.txt").exit_code == 0
    result = workspace.run(second, "bash scripts/hello.sh b; cat out/a.txt")

    assert result.stdout == "second b\nhello a\n"
    assert workspace.run("first", "echo $SKILL_NAME").stdout == "first\n"


def test_python3_is_available(workspace: Workspace, skill: Skill) -> None:
    result = workspace.run(
        skill, "python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' a b"
    )

    assert result.stdout == '["a", "b"]\n'
