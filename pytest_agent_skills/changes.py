"""Only what a change touches (``--changed-since REF``): which skill folders hold a file that
differs from a git ref, which were left out, and whose change reaches the others.

A skill is changed when one of its files differs from the ref (committed since, staged,
unstaged or untracked; a file of a skill folder nested in it belongs to the nested one).  Its
change reaches every other skill when what the model sees of each skill before loading one
changed: a name or a description that differs from the ref's, a skill added or removed.  The
trigger matrix then runs for all (see :attr:`ChangedSkills.reaches_all`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .filenames import SKILL_FILE
from .gitref import GitChanges, changes_since, read_at, relative_in
from .skill import parse_skill_text


@dataclass(frozen=True)
class ChangedSkills:
    """The skill folders of a run split by a git ref: ``changed`` (a file differs), ``outside``
    (not in the work tree: a URL root's download, another repository; kept, git cannot say),
    ``unchanged`` (left out); ``listed`` the skills whose name or description differs from the
    ref's or that were added, ``removed`` the SKILL.md files (relative to the work tree) the ref
    had and the work tree has not."""

    changes: GitChanges
    changed: tuple[Path, ...]
    outside: tuple[Path, ...]
    unchanged: tuple[Path, ...]
    listed: tuple[Path, ...]
    removed: tuple[str, ...]

    @property
    def kept(self) -> tuple[Path, ...]:
        """The folders to run on: the changed ones and those git cannot tell about."""
        return (*self.changed, *self.outside)

    @property
    def reaches_all(self) -> bool:
        """Whether the change reaches every skill's trigger runs: what the model is offered (a
        name, a description, the set of skills) differs from the ref's."""
        return bool(self.listed or self.removed)

    def summary(self, noun: str = "skill") -> str:
        """One line for the user: what was kept and how many were left out."""
        parts = [f"{len(self.changed)} {noun}(s) changed since {self.changes.short}"]
        if self.outside:
            parts.append(f"{len(self.outside)} outside the git work tree kept")
        parts.append(f"{len(self.unchanged)} unchanged left out")
        return ", ".join(parts)

    def reach(self) -> str:
        """Why the change reaches every skill's trigger runs ('' when it does not)."""
        root = self.changes.root
        causes = [
            f"{relative_in(root, folder)}: name or description changed" for folder in self.listed
        ]
        causes += [f"{path}: removed" for path in self.removed]
        if not causes:
            return ""
        more = f" (and {len(causes) - 3} more)" if len(causes) > 3 else ""
        return (
            "the skills offered to the model changed, so every skill's trigger runs are"
            f" included: {'; '.join(causes[:3])}{more}"
        )


def changed_since(folders: Sequence[Path], ref: str, where: Path) -> ChangedSkills:
    """:func:`changed_skills` for the ``--changed-since REF`` option, its summary said on
    stderr."""
    import sys

    split = changed_skills(folders, ref, where, f"--changed-since {ref}")
    sys.stderr.write(f"agent-skills: {split.summary()}\n")
    return split


def changed_skills(folders: Sequence[Path], ref: str, where: Path, purpose: str) -> ChangedSkills:
    """Split ``folders`` (skill folders, in run order) by what differs from ``ref`` in the git
    work tree holding ``where``; ``purpose`` names the option in errors
    (:class:`~pytest_agent_skills.gitref.GitError`: not a repository, an unknown ref)."""
    changes = changes_since(ref, where, purpose)
    by_relative: dict[str, Path] = {}
    outside: list[Path] = []
    for folder in folders:
        relative = relative_in(changes.root, folder)
        if relative is None:
            outside.append(folder)
        else:
            by_relative.setdefault(relative, folder)
    touched = {owner for path in changes.paths if (owner := _owner(path, by_relative))}
    changed = [folder for relative, folder in by_relative.items() if relative in touched]
    unchanged = [folder for relative, folder in by_relative.items() if relative not in touched]
    listed = [
        by_relative[relative]
        for relative in touched
        if _skill_path(relative) in changes.paths and _listing_changed(changes, relative)
    ]
    removed = _removed(changes, by_relative)
    return ChangedSkills(
        changes, tuple(changed), tuple(outside), tuple(unchanged), tuple(listed), removed
    )


def _owner(path: str, folders: dict[str, Path]) -> str | None:
    """The deepest skill folder (relative) holding the changed ``path``, if any."""
    for parent in PurePosixPath(path).parents:
        key = "" if str(parent) == "." else str(parent)
        if key in folders:
            return key
    return None


def _skill_path(relative_folder: str) -> str:
    return f"{relative_folder}/{SKILL_FILE}" if relative_folder else SKILL_FILE


def _listing_changed(changes: GitChanges, relative: str) -> bool:
    """Whether the skill's name or description (what a model sees before loading it) differs
    from the ref's, or the skill did not exist there."""
    skill_path = _skill_path(relative)
    before = read_at(changes, skill_path)
    if before is None:
        return True
    try:
        now = (changes.root / skill_path).read_bytes()
    except OSError:
        return True
    return _listing(before, skill_path) != _listing(now, skill_path)


def _listing(raw: bytes, skill_path: str) -> tuple[str, str]:
    """The name and description of a SKILL.md's content ('' for what it lacks)."""
    parsed = parse_skill_text(raw.decode("utf-8", "replace"), Path(skill_path))
    values = parsed.front_matter.values if parsed.front_matter else {}
    return str(values.get("name", "")), str(values.get("description", ""))


def _removed(changes: GitChanges, folders: Iterable[str]) -> tuple[str, ...]:
    """The SKILL.md files the ref had that the work tree has not (a skill removed or moved)."""
    known = set(folders)
    gone = []
    for path in sorted(changes.paths):
        posix = PurePosixPath(path)
        if posix.name != SKILL_FILE or (changes.root / path).exists():
            continue
        folder = "" if str(posix.parent) == "." else str(posix.parent)
        if folder not in known and read_at(changes, path) is not None:
            gone.append(path)
    return tuple(gone)
