"""``remove_tree``: a workspace tree goes whole, read-only and unreadable folders included,
and nothing outside it is touched through a link.  (Run as root and, through
``test_workspace_isolation.py::test_as_a_normal_user``, as an unprivileged uid, where the
folder modes really refuse.)"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.workspace import removal
from pytest_agent_skills.workspace.removal import RemovalError, remove_tree
from tests.support.stack import recursion_limit


def modes(root: Path) -> dict[str, int]:
    """Mode and contents of everything under ``root`` (links not followed)."""
    found = {".": stat.S_IMODE(root.lstat().st_mode)}
    for current, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(current, name)
            found[path.relative_to(root).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return found


@pytest.fixture(autouse=True)
def second_thread_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second thread is tested wherever ``tmp_path`` is (on a tmpfs, one thread would do
    it all)."""
    monkeypatch.setattr(removal, "_in_memory", lambda mount_id: False)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A read-only folder of the user's, next to the tree removed."""
    folder = tmp_path / "users"
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.txt").write_text("keep me\n")
    (folder / "sub" / "deep.txt").write_text("me too\n")
    for path in (folder / "sub" / "deep.txt", folder / "notes.txt", folder / "sub", folder):
        path.chmod(0o555 if path.is_dir() else 0o444)
    yield folder
    for path in (folder, folder / "sub"):
        path.chmod(0o755)


@pytest.mark.parametrize("alongside", ["", "skills"], ids=["one-thread", "skills-alongside"])
@pytest.mark.parametrize("mode", [0o555, 0o000, 0o300, 0o600, 0o100], ids="{:03o}".format)
def test_folders_of_any_mode_are_removed(tmp_path: Path, mode: int, alongside: str) -> None:
    tree = tmp_path / "ws"
    inner = tree / "skills" / "demo" / "docs"
    inner.mkdir(parents=True)
    (inner / "a.md").write_text("a")
    (inner / "a.md").chmod(0o444)
    (tree / "out").mkdir()
    (tree / "out" / "r.txt").write_text("r")
    for folder in (inner, inner.parent, tree / "out"):
        folder.chmod(mode)

    remove_tree(tree, alongside=alongside)

    assert not os.path.lexists(tree)


@pytest.mark.parametrize("alongside", ["", "a"], ids=["one-thread", "a-alongside"])
@pytest.mark.parametrize("mode", [0o000, 0o600, 0o100], ids="{:03o}".format)
def test_the_top_folder_itself_may_be_read_only(tmp_path: Path, mode: int, alongside: str) -> None:
    tree = tmp_path / "ws"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "f").write_text("f")
    (tree / "b").mkdir()
    (tree / "a").chmod(0o000)
    tree.chmod(mode)

    remove_tree(tree, alongside=alongside)

    assert not os.path.lexists(tree)


@pytest.mark.parametrize("alongside", ["", "runs", "artifacts", "missing"])
def test_links_are_removed_never_followed(tmp_path: Path, outside: Path, alongside: str) -> None:
    before = modes(outside)
    tree = tmp_path / "ws"
    (tree / "runs").mkdir(parents=True)
    (tree / "runs" / "to-folder").symlink_to(outside)
    (tree / "runs" / "to-file").symlink_to(outside / "notes.txt")
    (tree / "artifacts").symlink_to(outside / "sub")
    (tree / "runs").chmod(0o555)

    remove_tree(tree, alongside=alongside)

    assert not os.path.lexists(tree)
    assert modes(outside) == before
    assert (outside / "notes.txt").read_text() == "keep me\n"
    assert (outside / "sub" / "deep.txt").read_text() == "me too\n"


def test_a_link_or_a_file_given_is_unlinked(tmp_path: Path, outside: Path) -> None:
    link, file = tmp_path / "link", tmp_path / "file"
    link.symlink_to(outside)
    file.write_text("x")

    remove_tree(link)
    remove_tree(file)
    remove_tree(tmp_path / "missing")

    assert not os.path.lexists(link) and not os.path.lexists(file)
    assert (outside / "notes.txt").read_text() == "keep me\n"


def test_what_the_second_thread_cannot_remove_is_an_error_once_the_rest_is_gone(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "ws"
    (tree / "skills" / "demo").mkdir(parents=True)
    (tree / "out").mkdir()
    (tree / "out" / "r.txt").write_text("r")
    locked = tree / "skills" / "demo" / "locked.md"
    locked.write_text("x")
    if subprocess.run(["chattr", "+i", locked], capture_output=True, check=False).returncode:
        pytest.skip("chattr +i needs root on a file system with attributes (ext4, ...)")
    try:
        with pytest.raises(RemovalError) as raised:
            remove_tree(tree, alongside="skills")
    finally:
        subprocess.run(["chattr", "-i", locked], check=True)

    assert [item.path for item in raised.value.left] == [locked]
    assert str(raised.value) == (
        f"{tree} was not removed whole (1 left behind, everything else is gone): {locked}:"
        f" cannot be removed (Operation not permitted) - check its flags ('lsattr -d {locked}';"
        f" 'chattr -i' clears immutable) and owner; then remove {tree} by hand"
    )
    assert sorted(p.name for p in tree.iterdir()) == ["skills"]
    remove_tree(tree, alongside="skills")
    assert not os.path.lexists(tree)


def test_without_a_second_thread_one_removes_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "ws"
    (tree / "skills" / "demo").mkdir(parents=True)
    (tree / "skills" / "demo" / "SKILL.md").write_text("x")
    (tree / "out").mkdir()

    def refused(thread: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(threading.Thread, "start", refused)
    remove_tree(tree, alongside="skills")

    assert not os.path.lexists(tree)


@pytest.mark.parametrize("where", ["/dev/shm", "tmp_path"])
def test_no_second_thread_on_a_file_system_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = tmp_path if where == "tmp_path" else Path(where)
    if not (root.is_dir() and os.access(root, os.W_OK)):
        pytest.skip(f"no {where} to write to")
    # The types of the mounts at ``root`` (a mount hidden under another is listed too).
    fstypes = set(
        subprocess.run(
            ["findmnt", "-n", "-o", "FSTYPE", "-T", str(root)], capture_output=True, text=True
        ).stdout.split()
    )
    if len(fstypes) != 1 or (where == "/dev/shm" and fstypes != {"tmpfs"}):
        pytest.skip(f"{where} is not one known file system here")
    monkeypatch.undo()  # the real look-up, not the fixture's
    started: list[threading.Thread] = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    tree = Path(tempfile.mkdtemp(dir=root))
    (tree / "skills" / "demo").mkdir(parents=True)
    (tree / "skills" / "demo" / "SKILL.md").write_text("x")
    (tree / "out").mkdir()
    try:
        remove_tree(tree, alongside="skills")
    finally:
        shutil.rmtree(tree, ignore_errors=True)

    assert not os.path.lexists(tree)
    assert len(started) == (0 if fstypes <= {"tmpfs", "ramfs"} else 1)


def nested(root: Path, depth: int) -> None:
    """``root/a/a/.../a/f.txt``, ``depth`` folders deep (made through descriptors: the path
    would soon be too long to name at once)."""
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=folder)
            child = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = child
        os.close(os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o444, dir_fd=folder))
        os.chmod(f"/proc/self/fd/{folder}", 0o555)
    finally:
        os.close(folder)


@pytest.mark.parametrize("alongside", ["", "skills"], ids=["one-thread", "skills-alongside"])
@pytest.mark.parametrize("where", ["skills", "out"])
def test_a_tree_deeper_than_the_recursion_limit_is_removed(
    tmp_path: Path, alongside: str, where: str
) -> None:
    # A runaway command may nest folders without end; the workspace must still go.
    tree = tmp_path / "ws"
    (tree / where).mkdir(parents=True)
    nested(tree / where, 300)
    with recursion_limit(100):
        remove_tree(tree, alongside=alongside)

    assert not os.path.lexists(tree)


def swapping_after_listing(
    monkeypatch: pytest.MonkeyPatch, folder_name: str, swap: Callable[[int], None]
) -> None:
    """Make ``swap(descriptor)`` happen to the folder named ``folder_name`` right after its
    entries are listed: what a process writing into the tree at that moment does."""
    listed = removal._entries

    def entries(folder: int, skip: str = "") -> Iterator[tuple[str, bool]]:
        found = listed(folder, skip)
        if os.path.basename(os.readlink(f"/proc/self/fd/{folder}")) == folder_name:
            swap(folder)
        return found

    monkeypatch.setattr(removal, "_entries", entries)


def test_a_folder_swapped_for_a_link_meanwhile_is_unlinked_never_followed(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = modes(outside)
    tree = tmp_path / "ws"
    (tree / "out" / "victim").mkdir(parents=True)
    (tree / "out" / "victim" / "f.txt").write_text("x")

    def swap(folder: int) -> None:  # out/victim -> out/moved, out/victim now a link outside
        if os.path.lexists(f"/proc/self/fd/{folder}/moved"):
            return  # once
        os.rename("victim", "moved", src_dir_fd=folder, dst_dir_fd=folder)
        os.symlink(outside, "victim", dir_fd=folder)

    swapping_after_listing(monkeypatch, "out", swap)
    remove_tree(tree)

    assert not os.path.lexists(tree)
    assert modes(outside) == before
    assert (outside / "sub" / "deep.txt").read_text() == "me too\n"


def test_a_folder_refilled_meanwhile_is_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "ws"
    (tree / "out" / "busy").mkdir(parents=True)
    rounds: list[int] = []

    def refill(folder: int) -> None:
        if len(rounds) < 2:
            rounds.append(1)
            os.close(os.open("late.txt", os.O_WRONLY | os.O_CREAT, dir_fd=folder))

    swapping_after_listing(monkeypatch, "busy", refill)
    remove_tree(tree)

    assert not os.path.lexists(tree)
    assert len(rounds) == 2


def test_a_folder_refilled_without_end_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "ws"
    (tree / "out" / "busy").mkdir(parents=True)
    (tree / "runs").mkdir()

    def refill(folder: int) -> None:
        os.close(os.open(f"late{os.urandom(4).hex()}", os.O_WRONLY | os.O_CREAT, dir_fd=folder))

    swapping_after_listing(monkeypatch, "busy", refill)
    with pytest.raises(RemovalError) as raised:
        remove_tree(tree)

    assert [item.path for item in raised.value.left] == [tree / "out" / "busy"]
    assert (
        f"{tree / 'out' / 'busy'}: still not empty after its entries were removed (something"
        " writes into it) - stop whatever still writes into it"
    ) in str(raised.value)
    assert sorted(p.name for p in tree.iterdir()) == ["out"]
