"""Stage a skill into ``<workspace>/skills/<name>``: by links (default) or by copy.

Link staging makes ``skills/<name>`` a real folder whose entries are absolute
symlinks to the source's direct children, so its cost depends on the number
of top-level entries, not on the skill's size.  Only runtimes that mount the
source read-only use it (``sandbox``, ``docker``): nothing can write through
the links there, root included.  The ``local`` runtime always copies, since
a command could write through links (or hard links) into the user's folder;
it compares a cheap fingerprint (paths, sizes, mtimes) of the copy and of
the source before and after each run and reports any change (see
``docs/workspace.md``).

Copy staging copies the tree: regular files with their mode; a symlink that
resolves inside the skill becomes a relative link inside the copy (never a
way back to the source); one that leads outside (to a file or a folder,
``docs -> /etc``) is left out, never followed, unlike the reference, which
copies what it points to: no host file reaches the workspace, as under link
staging, where such a link does not resolve in the sandbox or the container.
:attr:`StagedSkill.left_out` names them (each run warns).  Anything else (a
FIFO, a socket, a device) is refused with a :class:`StagingError` instead of
hanging.

Both modes add the links ``out -> ../../out``, ``work -> ../../work`` and
``inputs -> ../../work/inputs``.  Unlike the reference, a skill that ships
its own ``out``, ``work`` or ``inputs`` entry is refused instead of losing it,
and a name that is not a plain folder name is refused before anything is
touched.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..skill import Skill
from .errors import StagingError
from .globbing import is_inside
from .names import STAGE_MODES
from .removal import remove_tree

WORKSPACE_LINKS = {"out": "../../out", "work": "../../work", "inputs": "../../work/inputs"}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class StagedSkill:
    name: str
    source: Path
    target: Path
    mode: str
    digest: str
    #: Symbolic links of the skill (paths from its folder) left out of a copy: they lead
    #: outside the skill folder.
    left_out: tuple[str, ...] = ()


def check_skill_name(name: str, source: Path) -> None:
    if not _SAFE_NAME.match(name) or len(name) > 128:
        raise StagingError(
            f"{source / 'SKILL.md'}: skill name {name!r} cannot be a workspace folder name; use"
            " letters, digits, '.', '_' and '-' only (no '/', no '..', no leading dot)"
        )


def check_stage_mode(mode: str) -> None:
    if mode not in STAGE_MODES:
        raise StagingError(f"unknown stage mode {mode!r} (choose from {', '.join(STAGE_MODES)})")


Snapshot = dict[str, tuple[int, int, int]]


def snapshot(source: Path) -> Snapshot:
    """Mode, size and modification time of every entry under ``source`` (one ``stat`` each)."""
    return {
        relative: (info.st_mode, info.st_size, info.st_mtime_ns) for relative, info in _walk(source)
    }


def fingerprint(state: Snapshot) -> str:
    """A digest of a snapshot: changes when a file is added, removed, resized or rewritten."""
    digest = hashlib.sha256()
    for relative, values in sorted(state.items()):
        digest.update(f"{relative}\0{values}\n".encode())
    return digest.hexdigest()


def changed_files(before: Snapshot, after: Snapshot) -> list[str]:
    names = before.keys() | after.keys()
    return sorted(name for name in names if before.get(name) != after.get(name))


def _walk(source: Path) -> list[tuple[str, os.stat_result]]:
    entries: list[tuple[str, os.stat_result]] = []
    pending = [(str(source), "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as iterator:
            for entry in iterator:
                relative = prefix + entry.name
                info = entry.stat(follow_symlinks=False)
                entries.append((relative, info))
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, relative + "/"))
    return entries


def stage_skill(
    skill: Skill, skills_dir: Path, mode: str, digest: str, *, source: Path | None = None
) -> StagedSkill:
    """Stage ``skill`` (whose current :func:`fingerprint` is ``digest``) under ``skills_dir``;
    ``source``: its folder resolved, when the caller has it already."""
    check_stage_mode(mode)
    source = skill.directory.resolve() if source is None else source
    name = skill.name
    check_skill_name(name, source)
    reserved = sorted(entry for entry in WORKSPACE_LINKS if os.path.lexists(source / entry))
    if reserved:
        raise StagingError(
            f"{source}: the skill ships its own {', '.join(repr(e) for e in reserved)}, which the"
            " workspace needs for its links (out -> ../../out, work -> ../../work, inputs ->"
            " ../../work/inputs); rename that entry in the skill"
        )
    target = skills_dir / name
    remove_tree(target)
    target.mkdir(parents=True)
    left_out: list[str] = []
    if mode == "link":
        for entry in sorted(os.listdir(source)):
            os.symlink(source / entry, target / entry)
    else:
        _copy_folder(str(source), str(target), str(source), str(target), left_out)
    for link, destination in WORKSPACE_LINKS.items():
        os.symlink(destination, target / link)
    _drop_write(str(target))
    return StagedSkill(name, source, target, mode, digest, tuple(left_out))


def _copy_folder(folder: str, into: str, root: str, target_root: str, left_out: list[str]) -> None:
    """Copy the folder ``folder`` of the real folder ``root`` into the existing folder ``into``
    of the copy ``target_root`` (see the module doc); the links left out (they lead outside
    ``root``) are added to ``left_out``, as paths from it.

    Files and sub-folders of the copy are read-only (``chmod a-w``); ``into`` itself is left
    writable for the caller to finish.
    """
    with os.scandir(folder) as iterator:
        entries = sorted(iterator, key=lambda entry: entry.name)
    for entry in entries:
        destination = os.path.join(into, entry.name)
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if is_inside(real, [Path(root)]):
                inside = os.path.join(target_root, os.path.relpath(real, root))
                os.symlink(os.path.relpath(inside, os.path.dirname(destination)), destination)
            else:  # never followed: what it points to is not the skill's
                left_out.append(os.path.relpath(entry.path, root).replace(os.sep, "/"))
        elif entry.is_dir(follow_symlinks=False):
            os.mkdir(destination)
            _copy_folder(entry.path, destination, root, target_root, left_out)
            _drop_write(destination)
        elif entry.is_file(follow_symlinks=False):
            _copy_file(entry.path, destination)
        else:
            raise StagingError(f"{entry.path}: {_UNCOPYABLE}")


def _copy_file(source: str, destination: str) -> None:
    """Copy the bytes (in the kernel where it can) and the mode, without the write bits.

    Through plain descriptors: a file object costs three more system calls per file, and a
    skill is mostly small files.
    """
    reader = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        info = os.fstat(reader)
        mode = stat.S_IMODE(info.st_mode) & ~0o222
        # Made read-only at once (the new file is still written through this descriptor); a
        # chmod only where the umask took more bits away.
        writer = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            _copy_bytes(reader, writer, info.st_size)
            if stat.S_IMODE(os.fstat(writer).st_mode) != mode:
                os.fchmod(writer, mode)
        finally:
            os.close(writer)
    finally:
        os.close(reader)


def _copy_bytes(reader: int, writer: int, size: int) -> None:
    try:
        remaining = size
        while remaining > 0:
            copied = os.copy_file_range(reader, writer, remaining)
            if copied == 0:
                break
            remaining -= copied
    except OSError:  # no copy_file_range between these file systems: copy in user space
        os.lseek(reader, 0, os.SEEK_SET)
        os.ftruncate(writer, 0)
        os.lseek(writer, 0, os.SEEK_SET)
        with open(reader, "rb", closefd=False) as source, open(writer, "wb", closefd=False) as copy:
            shutil.copyfileobj(source, copy)


_UNCOPYABLE = (
    "not a regular file, folder or symlink (a FIFO, socket or device); the workspace cannot copy"
    " it - remove it from the skill"
)


def _drop_write(path: str) -> None:
    """``chmod a-w`` (never on a symlink: that would change what it points to)."""
    info = os.lstat(path)
    if not stat.S_ISLNK(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o222)
