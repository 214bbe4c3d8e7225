"""Removal never crosses a mount point: a folder mounted inside a workspace (a bind mount of a
folder of the same file system - same device - or another file system) is neither entered nor
unmounted; it is reported as left behind and every file it shows stays.  Mounting needs root
(CI runs as root); each mount is undone by the test, whatever happens."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.workspace import WorkspaceError, removal
from pytest_agent_skills.workspace.local import LocalRuntime
from pytest_agent_skills.workspace.removal import RemovalError, remove_tree
from tests.support.workspace import make_skill

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="mounting a folder inside a workspace needs root (CI runs as root)"
)


@pytest.fixture(autouse=True)
def second_thread_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second thread is tested wherever ``tmp_path`` is (on a tmpfs, one thread would do
    it all)."""
    monkeypatch.setattr(removal, "_in_memory", lambda mount_id: False)


def files_of(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A user's folder on the same file system as the workspaces (a bind mount of it has the
    same device number as the tree around it)."""
    folder = tmp_path / "users"
    (folder / "sub").mkdir(parents=True)
    (folder / "keep.txt").write_text("keep me\n")
    (folder / "sub" / "deep.txt").write_text("me too\n")
    return folder


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    """Mount points to undo at the end (lazily: a failed test must not leave one behind)."""
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], capture_output=True, check=False)


def bind(source: Path, point: Path, mounts: list[Path]) -> None:
    point.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "--bind", str(source), str(point)], check=True)
    mounts.append(point)


def tree_with_files(root: Path) -> None:
    for folder in ("skills/demo/docs", "out", "work/inputs", "runs/run_1"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "f.txt").write_text("ours\n")


@pytest.mark.parametrize("alongside", ["", "skills"], ids=["one-thread", "skills-alongside"])
@pytest.mark.parametrize(
    "where", ["out/mnt", "mnt", "work/a/b", "skills/demo/mnt"], ids=lambda w: w.replace("/", "-")
)
def test_a_bind_mount_inside_the_tree_is_left_and_reported(
    tmp_path: Path, outside: Path, mounts: list[Path], where: str, alongside: str
) -> None:
    before = files_of(outside)
    tree = tmp_path / "ws"
    tree_with_files(tree)
    bind(outside, tree / where, mounts)
    assert os.stat(tree / where).st_dev == os.stat(tree).st_dev  # the device tells nothing

    with pytest.raises(RemovalError) as raised:
        remove_tree(tree, alongside=alongside)

    assert files_of(outside) == before
    assert [item.path for item in raised.value.left] == [tree / where]
    assert str(raised.value) == (
        f"{tree} was not removed whole (1 left behind, everything else is gone):"
        f" {tree / where}: a mount point (another file system, or a bind mount), neither"
        f" entered nor unmounted - unmount it ('umount {tree / where}') if nothing else uses it;"
        f" then remove {tree} by hand"
    )
    assert os.path.ismount(tree / where) or files_of(tree / where) == before  # still mounted
    remaining = {
        p.relative_to(tree).as_posix()
        for p in tree.rglob("*")
        if p == tree / where or not p.is_relative_to(tree / where)
    }
    assert remaining == _ancestors(where)  # everything else is gone
    subprocess.run(["umount", str(tree / where)], check=True)
    mounts.remove(tree / where)
    remove_tree(tree)
    assert not os.path.lexists(tree)
    assert files_of(outside) == before


def _ancestors(where: str) -> set[str]:
    parts = where.split("/")
    return {"/".join(parts[: index + 1]) for index in range(len(parts))}


def test_another_file_system_and_a_mounted_file_are_left_too(
    tmp_path: Path, outside: Path, mounts: list[Path]
) -> None:
    before = files_of(outside)
    tree = tmp_path / "ws"
    tree_with_files(tree)
    (tree / "out" / "tmp").mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "test", str(tree / "out/tmp")], check=True
    )
    mounts.append(tree / "out/tmp")
    (tree / "out" / "tmp" / "theirs.txt").write_text("theirs\n")
    (tree / "work" / "keep.txt").write_text("")
    subprocess.run(
        ["mount", "--bind", str(outside / "keep.txt"), str(tree / "work/keep.txt")], check=True
    )
    mounts.append(tree / "work/keep.txt")

    with pytest.raises(RemovalError) as raised:
        remove_tree(tree)

    assert sorted(item.path for item in raised.value.left) == [
        tree / "out/tmp",
        tree / "work/keep.txt",
    ]
    assert (tree / "out" / "tmp" / "theirs.txt").read_text() == "theirs\n"
    assert files_of(outside) == before


def test_a_tree_that_is_itself_a_mount_point_is_not_touched(
    tmp_path: Path, outside: Path, mounts: list[Path]
) -> None:
    before = files_of(outside)
    bind(outside, tmp_path / "ws", mounts)

    with pytest.raises(RemovalError, match="a mount point") as raised:
        remove_tree(tmp_path / "ws")

    assert [item.path for item in raised.value.left] == [tmp_path / "ws"]
    assert files_of(outside) == before


@pytest.mark.parametrize("isolate", [True, False], ids=["pid-namespace", "process-group"])
def test_closing_a_workspace_with_a_mount_inside_keeps_every_outside_file(
    tmp_path: Path, outside: Path, mounts: list[Path], isolate: bool
) -> None:
    before = files_of(outside)
    skill = make_skill(tmp_path / "skills")
    runtime = LocalRuntime(work_root=tmp_path / "workspaces", isolate=isolate)
    workspace = runtime.create_workspace("mounted")
    result = workspace.run(skill, "mkdir -p $OUTPUT_DIR/mnt && echo made > $OUTPUT_DIR/r.txt")
    assert result.exit_code == 0, result.stderr
    bind(outside, workspace.out_dir / "mnt", mounts)

    with pytest.raises(WorkspaceError) as raised:
        workspace.close()

    assert isinstance(raised.value, RemovalError)
    assert [item.path for item in raised.value.left] == [workspace.out_dir / "mnt"]
    assert f"umount {workspace.out_dir / 'mnt'}" in str(raised.value)
    assert files_of(outside) == before
    assert not (workspace.out_dir / "r.txt").exists()  # the rest went
    assert workspace.closed
    runtime.close()  # nothing left open: no second attempt
    assert files_of(outside) == before


def test_a_runtime_closes_every_workspace_and_raises_the_one_left_behind(
    tmp_path: Path, outside: Path, mounts: list[Path]
) -> None:
    runtime = LocalRuntime(work_root=tmp_path / "workspaces")
    first, second = runtime.create_workspace("first"), runtime.create_workspace("second")
    bind(outside, first.out_dir / "mnt", mounts)

    with pytest.raises(RemovalError) as raised:
        runtime.close()

    assert [item.path for item in raised.value.left] == [first.out_dir / "mnt"]
    assert first.closed and second.closed
    assert not second.path.exists()
