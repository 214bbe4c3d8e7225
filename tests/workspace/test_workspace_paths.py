"""Every path a user (or a model) gives - cwd, skill name, input names, output globs, artifact
names - is confined to the workspace before anything is written or deleted: ``..``, absolute
paths and symlinks, for each.  And what a command leaves behind (symlinks where the test
process writes: ``.metadata.tmp``, ``runs``, ``artifacts``, ``skills``) is never followed.
"""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import (
    StagingError,
    Workspace,
    WorkspaceError,
    WorkspacePathError,
    create_runtime,
)
from tests.support.workspace import make_skill, runtime, skill, work_root, workspace  # noqa: F401


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Workspace]:
    with create_runtime("local", work_root=tmp_path / "work") as opened:
        yield opened.create_workspace("paths")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host folder next to the workspaces, with a file that must stay as it is."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep")
    return folder


def untouched(folder: Path) -> bool:
    return (
        sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
        and (folder / "keep.txt").read_text() == "keep"
    )


# --- cwd ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cwd",
    ["../../../made-by-cwd", "scripts/../../../../made-by-cwd", "$WORK_DIR/../../made-by-cwd"],
)
def test_a_cwd_climbing_out_is_refused_before_a_folder_is_made(
    local: Workspace, skill: Skill, cwd: str
) -> None:
    with pytest.raises(WorkspacePathError, match="outside the workspace"):
        local.run(skill, "pwd", cwd=cwd)

    assert not (local.path.parent / "made-by-cwd").exists()


def test_an_absolute_cwd_outside_is_refused(local: Workspace, skill: Skill, outside: Path) -> None:
    with pytest.raises(WorkspacePathError) as error:
        local.run(skill, "pwd", cwd=str(outside / "new"))

    assert str(error.value).startswith(f"cwd {str(outside / 'new')!r} resolves to")
    assert untouched(outside)


def test_a_cwd_under_a_link_to_outside_is_refused(
    local: Workspace, skill: Skill, outside: Path
) -> None:
    (local.path / "work" / "link").symlink_to(outside)

    with pytest.raises(WorkspacePathError, match="outside the workspace"):
        local.run(skill, "pwd", cwd="$WORK_DIR/link/new")

    assert untouched(outside)


# --- skill names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../canary", "/etc/canary", "a/../../canary", ".hidden"])
def test_a_skill_name_that_is_not_a_folder_name_is_refused_before_staging(
    local: Workspace, tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "skills" / "evil"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: '{name}'\ndescription: d\n---\nbody\n")

    with pytest.raises(StagingError, match="cannot be a workspace folder name"):
        local.run(Skill.load(folder), "true")

    assert sorted(p.name for p in (local.path / "skills").iterdir()) == []


def test_a_staged_skill_folder_that_became_a_link_is_replaced_not_followed(
    local: Workspace, skill: Skill, outside: Path
) -> None:
    local.stage_skill(skill)
    staged = local.path / "skills" / skill.name
    staged.chmod(0o755)  # the copy is read-only; a command of the same user may change that
    os.rename(staged, local.path / "moved")
    staged.symlink_to(outside)

    result = local.run(skill, "cat SKILL.md")

    assert result.exit_code == 0
    assert not staged.is_symlink()
    assert untouched(outside)


def test_a_skills_folder_that_became_a_link_is_refused(
    local: Workspace, tmp_path: Path, outside: Path
) -> None:
    os.rename(local.path / "skills", local.path / "skills.old")
    (local.path / "skills").symlink_to(outside)

    with pytest.raises(WorkspacePathError) as error:
        local.run(make_skill(tmp_path / "skills"), "true")

    assert str(error.value) == (
        f"skills folder: 'skills' in the workspace {str(local.path)!r} is a symlink or not a"
        " folder; the workspace never follows a link there"
    )
    assert untouched(outside)


# --- input names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../escape.txt", "sub/../../escape.txt", "/etc/escape.txt", ""])
def test_an_input_name_outside_work_inputs_is_refused(local: Workspace, name: str) -> None:
    with pytest.raises(WorkspacePathError) as error:
        local.put_inputs({name: "x"})

    assert str(error.value) == (
        f"input name {name!r} must name a file inside work/inputs (a relative path without '..')"
    )
    assert not (local.path / "work" / "escape.txt").exists()
    assert not (local.path / "escape.txt").exists()


@pytest.mark.parametrize("name", ["a\0b.txt", "sub\0/x", "\0"])
def test_a_nul_byte_in_an_input_name_is_a_clean_error(local: Workspace, name: str) -> None:
    with pytest.raises(WorkspaceError) as error:
        local.put_inputs({name: "x"})

    assert str(error.value) == "input name must not contain NUL bytes"


def test_an_input_through_a_link_to_outside_is_refused(local: Workspace, outside: Path) -> None:
    (local.path / "work" / "inputs" / "sub").symlink_to(outside)

    with pytest.raises(WorkspacePathError) as error:
        local.put_inputs({"sub/keep.txt": "overwritten"})

    assert "'work/inputs/sub' in the workspace" in str(error.value)
    assert untouched(outside)


def test_an_input_whose_name_is_a_link_replaces_the_link(local: Workspace, outside: Path) -> None:
    link = local.path / "work" / "inputs" / "data.txt"
    link.symlink_to(outside / "keep.txt")

    local.put_inputs({"data.txt": "mine"})

    assert not link.is_symlink()
    assert link.read_text() == "mine"
    assert untouched(outside)


def test_an_inputs_folder_that_became_a_link_is_refused(local: Workspace, outside: Path) -> None:
    inputs = local.path / "work" / "inputs"
    os.rename(inputs, local.path / "work" / "inputs.old")
    inputs.symlink_to(outside)

    with pytest.raises(WorkspacePathError, match="'work/inputs' in the workspace"):
        local.put_inputs({"new.txt": "x"})

    assert untouched(outside)


# --- output globs ---------------------------------------------------------------------------------
# ``..``, absolute patterns and symlinks out: test_workspace_security.py
# test_output_globs_and_symlinks_cannot_escape, under every runtime.


def test_a_nul_byte_in_an_output_glob_is_a_clean_error(local: Workspace, skill: Skill) -> None:
    with pytest.raises(WorkspacePathError) as error:
        local.run(skill, "echo x > out/a.txt", output_files=["out/a\0.txt"])

    assert str(error.value) == "output_files pattern 'out/a\\x00.txt' must not contain NUL bytes"


# --- artifact names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../escape.txt", "/tmp/escape.txt", "out/../../../escape.txt"])
def test_an_artifact_name_outside_artifacts_is_refused(local: Workspace, name: str) -> None:
    with pytest.raises(WorkspacePathError, match="must be a relative path inside the workspace"):
        local.artifact_saver(name, io.BytesIO(b"data"), "text/plain")

    assert not (local.path / "escape.txt").exists()
    assert not (local.path.parent / "escape.txt").exists()


# --- what a command leaves where the test process writes, under every runtime --------------------


def not_saved(workspace: Workspace, output: str, link: str) -> str:
    """The warning of an output file not saved because ``link`` in the workspace is a link."""
    return (
        f"output file {output!r} not saved as an artifact: artifact name: {link!r} in the"
        f" workspace {str(workspace.path)!r} is a symlink or not a folder; the workspace never"
        " follows a link there"
    )


def test_links_a_command_leaves_are_never_followed_by_the_test_process(
    workspace: Workspace, skill: Skill, outside: Path
) -> None:
    plant = (
        f'ln -s {outside}/metadata.json "$WORKSPACE_DIR/.metadata.tmp"'
        f' && ln -s {outside} "$WORKSPACE_DIR/artifacts"'
        " && echo report > out/report.txt"
    )

    result = workspace.run(skill, plant, output_files=["out/*.txt"], save_as_artifacts=True)

    assert result.exit_code == 0, result.stderr
    assert [f.name for f in result.output_files] == ["out/report.txt"]
    assert result.artifact_files == ()
    assert result.warnings == (not_saved(workspace, "out/report.txt", "artifacts"),)
    assert untouched(outside)
    assert not (workspace.path / ".metadata.tmp").exists()

    moved = workspace.run(
        skill,
        f'mv "$WORKSPACE_DIR/runs" "$WORKSPACE_DIR/runs.old"'
        f' && ln -s {outside} "$WORKSPACE_DIR/runs"',
    )
    assert moved.exit_code == 0, moved.stderr
    with pytest.raises(WorkspacePathError, match="'runs' in the workspace"):
        workspace.run(skill, "true", stdin="data")
    assert untouched(outside)


@pytest.mark.parametrize("planted", ["artifacts/0", "artifacts/0/out", "artifacts/0/out/keep.txt"])
def test_an_artifact_path_through_a_link_a_command_left_is_never_followed(
    workspace: Workspace, skill: Skill, outside: Path, planted: str
) -> None:
    """A link at any depth of ``artifacts/<version>/<name>``: a folder link is refused with a
    warning, a link in the file's place is replaced; the host file stays as it is."""
    target = outside / "keep.txt" if planted.endswith(".txt") else outside
    plant = (
        f'mkdir -p "$(dirname "$WORKSPACE_DIR/{planted}")"'
        f' && ln -s {target} "$WORKSPACE_DIR/{planted}" && echo report > out/keep.txt'
    )

    result = workspace.run(skill, plant, output_files=["out/*.txt"], save_as_artifacts=True)

    assert result.exit_code == 0, result.stderr
    if planted.endswith(".txt"):
        assert [(a.name, a.version) for a in result.artifact_files] == [("out/keep.txt", 0)]
        saved = workspace.path / planted
        assert (saved.is_symlink(), saved.read_text()) == (False, "report\n")
    else:
        assert result.artifact_files == ()
        assert result.warnings == (not_saved(workspace, "out/keep.txt", planted),)
    assert untouched(outside)
