"""A repository of skills over one or more roots.

A root is a local folder (URL roots are resolved to a local folder first by
:mod:`pytest_agent_skills.sources`).  Every folder under a root holding a
``SKILL.md`` is a skill, a folder inside another skill included (as in the
reference runtime: a nested ``SKILL.md`` is a second skill, not one of its
parent's files); the walk does not enter hidden folders below the root.  When
two folders declare the same skill name, the first one found wins - roots in
the order given, folders in sorted order inside a root (a parent before the
skills nested in it) - and the clash is kept in
:attr:`SkillRepository.duplicates` so that callers can report it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from .errors import AgentSkillsError
from .filenames import SKILL_FILE
from .links import SkippedLink, skipped_link
from .listings import FolderListings, is_file, is_folder
from .skill import Skill


class UnknownSkillError(AgentSkillsError, LookupError):
    """``get(name)`` for a name that no root holds."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = list(known)
        import difflib  # only for this message

        close = difflib.get_close_matches(name, self.known, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = ", ".join(self.known) if self.known else "(none)"
        super().__init__(f"unknown skill {name!r}.{hint} Known skills: {listing}")


class RootNotFoundError(AgentSkillsError):
    """A skill root that does not exist or is not a folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(f"skill root {str(root)!r} does not exist or is not a folder")


class SkillSummary(NamedTuple):
    name: str
    description: str
    path: Path


class DuplicateSkill(NamedTuple):
    """Two folders declaring the same skill name; ``winner`` is the one used."""

    name: str
    winner: Path
    shadowed: Path

    def message(self) -> str:
        return (
            f"skill {self.name!r} is defined twice: {self.winner} is used,"
            f" {self.shadowed} is ignored (the first root listed wins). Rename one of them."
        )


def walk_folders(
    root: Path, listings: FolderListings | None = None, skipped: list[SkippedLink] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` following symlinks, each real folder once (a link loop ends), hidden folders
    below ``root`` skipped; the caller may prune the yielded ``dirnames`` in place.  Folders
    are listed through ``listings`` (a run's shared listings; new ones when None); each linked
    folder not walked (a link back into a folder it is in, a second way to a folder walked
    already) is added to ``skipped`` when given."""
    walk = _walk(root, listings or FolderListings(), skipped)
    for current, dirnames, entries, _identity in walk:
        yield current, dirnames, [name for name in entries if name not in dirnames]


def _walk(
    root: Path, listings: FolderListings, skipped: list[SkippedLink] | None = None
) -> Iterator[tuple[str, list[str], dict[str, os.DirEntry[str]], tuple[int, int]]]:
    """(folder as named from ``root``, its sub-folders to walk, its entries, its (device,
    inode)), as :func:`walk_folders` goes: the real folders first, depth first in sorted
    order, then each linked folder met (in that order), so that a folder is walked at its
    real path whenever it is under ``root``."""
    # (device, inode) pairs, not realpath(): one stat per folder instead of one per path part;
    # each with the folder's name as first walked.
    visited: dict[tuple[int, int], str] = {}
    top = os.fspath(root)
    # Each folder as named from root (what is yielded), absolute (how it is listed), and the
    # (device, inode) of the folders it is in.
    Folder = tuple[str, str, tuple[tuple[int, int], ...]]
    stack: list[Folder] = [(top, os.path.abspath(top), ())]
    linked: list[Folder] = []  # walked once the real folders are
    while stack or linked:
        if not stack:
            stack.append(linked.pop(0))
        current, absolute, above = stack.pop()
        entries = listings.entries(absolute)
        if entries is None:
            continue
        try:
            status = os.stat(absolute)
        except OSError:
            continue
        identity = (status.st_dev, status.st_ino)
        if identity in visited:
            if skipped is not None:
                walked = None if identity in above else visited[identity]
                skipped.append(skipped_link(current, walked))
            continue
        visited[identity] = current
        dirnames = _folder_names(entries)
        yield current, dirnames, entries, identity
        if dirnames:
            # os.path.join's result, without a call per folder (a name is never absolute).
            named = current if not current or current.endswith(os.sep) else current + os.sep
            listed = absolute if absolute.endswith(os.sep) else absolute + os.sep
            inside = (*above, identity)
            links = 0
            for name in reversed(dirnames):
                folder = (named + name, listed + name, inside)
                if _is_link(entries[name]):
                    linked.append(folder)
                    links += 1
                else:
                    stack.append(folder)
            if links:
                linked.sort(key=_named)  # walked in sorted order


def _folder_names(entries: dict[str, os.DirEntry[str]]) -> list[str]:
    """The names of the entries that are folders, links followed (as ``os.walk`` tells: an
    entry whose link cannot be followed is no folder), hidden ones left out, sorted."""
    shown = [(name, entry) for name, entry in entries.items() if name[0] != "."]
    try:
        return sorted([name for name, entry in shown if entry.is_dir()])
    except OSError:  # rare: a link to a folder this user may not look into
        return sorted([name for name, entry in shown if is_folder(entry)])


def _named(folder: tuple[str, str, tuple[tuple[int, int], ...]]) -> str:
    return folder[0]


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def find_skill_dirs(
    root: Path, listings: FolderListings | None = None, skipped: list[SkippedLink] | None = None
) -> Iterator[Path]:
    """Skill folders under ``root`` (``root`` itself included), in sorted walk order, following
    symlinks once.  As in the reference, a ``SKILL.md`` inside another skill's folder is a skill
    of its own: the walk goes on below a skill folder.  Folders are listed through
    ``listings`` (new ones when None); linked folders not walked go to ``skipped``."""
    for directory, _identity in skill_folders(root, listings or FolderListings(), skipped):
        yield directory


def skill_folders(
    root: Path, listings: FolderListings, skipped: list[SkippedLink] | None = None
) -> Iterator[tuple[Path, tuple[int, int]]]:
    """:func:`find_skill_dirs` with each folder's (device, inode), which the walk has."""
    root = root if isinstance(root, Path) else Path(root)
    top = str(root)
    for current, _dirnames, entries, identity in _walk(root, listings, skipped):
        entry = entries.get(SKILL_FILE)
        if entry is not None and is_file(entry):
            yield (root if current == top else Path(current)), identity


class SkillRepository:
    """Skills found under ``roots`` (local folders), indexed by name."""

    def __init__(self, roots: Iterable[Path | str]) -> None:
        self.roots: list[Path] = []
        seen: set[Path] = set()
        for root in roots:
            path = Path(root).expanduser()
            if not path.is_dir():
                raise RootNotFoundError(path)
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                self.roots.append(path)
        self._skills: dict[str, Skill] = {}
        self.duplicates: list[DuplicateSkill] = []
        for root in self.roots:
            for directory in find_skill_dirs(root):
                self._add(Skill.load(directory))

    @classmethod
    def from_skills(cls, skills: Iterable[Skill]) -> SkillRepository:
        """A repository of the given skills (no roots), duplicates resolved as for roots."""
        repository = cls(())
        for skill in skills:
            repository._add(skill)
        return repository

    def _add(self, skill: Skill) -> None:
        existing = self._skills.get(skill.name)
        if existing is not None:
            self.duplicates.append(DuplicateSkill(skill.name, existing.directory, skill.directory))
            return
        self._skills[skill.name] = skill

    def names(self) -> list[str]:
        return sorted(self._skills)

    def summaries(self) -> list[SkillSummary]:
        return [
            SkillSummary(name, self._skills[name].description, self._skills[name].directory)
            for name in self.names()
        ]

    def skills(self) -> list[Skill]:
        return [self._skills[name] for name in self.names()]

    def get(self, name: str) -> Skill:
        try:
            return self._skills[name.strip()]
        except KeyError:
            raise UnknownSkillError(name, self.names()) from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip() in self._skills

    def __len__(self) -> int:
        return len(self._skills)
