"""Stage a skill into ``<workspace>/skills/<name>``: by links (default) or by copy.

Link staging makes ``skills/<name>`` a real folder whose entries are absolute
symlinks to the source's direct children, so its cost depends on the number
of top-level entries, not on the skill's size.  The runtimes then make the
source read-only to the command: ``sandbox`` and ``docker`` bind-mount it
read-only; ``local`` cannot stop a root process from writing through the
links, so it compares a cheap fingerprint (paths, sizes, mtimes) before and
after each run and reports any change (see ``docs/workspace.md``).

Copy staging copies the tree (symlinks resolved, like the reference).

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

WORKSPACE_LINKS = {"out": "../../out", "work": "../../work", "inputs": "../../work/inputs"}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class StagedSkill:
    name: str
    source: Path
    target: Path
    mode: str
    digest: str


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
    if mode == "link":
        for entry in sorted(os.listdir(source)):
            os.symlink(source / entry, target / entry)
    else:
        shutil.copytree(source, target, symlinks=False, dirs_exist_ok=True)
    for link, destination in WORKSPACE_LINKS.items():
        os.symlink(destination, target / link)
    make_read_only(target)
    return StagedSkill(name, source, target, mode, digest)


def make_read_only(root: Path) -> None:
    """``chmod a-w`` on a staged tree (symlinks untouched: that would follow them)."""
    for current, dirnames, filenames in os.walk(root):
        for filename in filenames:
            _drop_write(Path(current) / filename)
        for dirname in dirnames:
            _drop_write(Path(current) / dirname)
    _drop_write(root)


def _drop_write(path: Path) -> None:
    info = path.lstat()
    if not stat.S_ISLNK(info.st_mode):
        path.chmod(stat.S_IMODE(info.st_mode) & ~0o222)


def remove_tree(path: Path) -> None:
    """``rm -rf`` that also removes read-only staged folders (never follows symlinks)."""
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    for current, dirnames, _ in os.walk(path):
        for dirname in dirnames:
            child = Path(current) / dirname
            if not child.is_symlink():
                child.chmod(0o700)
    path.chmod(0o700)
    shutil.rmtree(path)
