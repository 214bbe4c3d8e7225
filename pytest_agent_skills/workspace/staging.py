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
from . import STAGE_MODES
from .errors import StagingError
from .globbing import is_inside
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
    pending = [(source, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as iterator:
            for entry in iterator:
                relative = prefix + entry.name
                info = entry.stat(follow_symlinks=False)
                entries.append((relative, info))
                if entry.is_dir(follow_symlinks=False):
                    pending.append((Path(entry.path), relative + "/"))
    return entries


def stage_skill(skill: Skill, skills_dir: Path, mode: str, digest: str) -> StagedSkill:
    """Stage ``skill`` (whose current :func:`fingerprint` is ``digest``) under ``skills_dir``."""
    check_stage_mode(mode)
    source = skill.directory.resolve()
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
        left_out = copy_tree(source, target)
    for link, destination in WORKSPACE_LINKS.items():
        os.symlink(destination, target / link)
    _drop_write(str(target))
    return StagedSkill(name, source, target, mode, digest, tuple(left_out))


def copy_tree(source: Path, target: Path) -> list[str]:
    """Copy the real folder ``source`` into the existing folder ``target`` (see the module doc);
    the links left out (they lead outside ``source``), as paths from it.

    Files and sub-folders of the copy are read-only (``chmod a-w``); ``target`` itself is left
    writable for the caller to finish.
    """
    left_out: list[str] = []
    _copy_folder(str(source), str(target), str(source), str(target), left_out)
    return left_out


def _copy_folder(folder: str, into: str, root: str, target_root: str, left_out: list[str]) -> None:
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
    """Copy the bytes (in the kernel where it can) and the mode, without the write bits."""
    with open(source, "rb") as reader, open(destination, "xb") as writer:
        info = os.fstat(reader.fileno())
        try:
            remaining = info.st_size
            while remaining > 0:
                copied = os.copy_file_range(reader.fileno(), writer.fileno(), remaining)
                if copied == 0:
                    break
                remaining -= copied
        except OSError:  # no copy_file_range between these file systems: copy in user space
            reader.seek(0)
            writer.seek(0)
            writer.truncate()
            shutil.copyfileobj(reader, writer)
        os.fchmod(writer.fileno(), stat.S_IMODE(info.st_mode) & ~0o222)


_UNCOPYABLE = (
    "not a regular file, folder or symlink (a FIFO, socket or device); the workspace cannot copy"
    " it - remove it from the skill"
)


def _drop_write(path: str) -> None:
    """``chmod a-w`` (never on a symlink: that would change what it points to)."""
    info = os.lstat(path)
    if not stat.S_ISLNK(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o222)
