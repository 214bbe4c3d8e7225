"""Symbolic links in pytest's collection of a skill repository.

pytest follows linked folders: ``plugins/uipath -> ..`` makes it walk the repository again
inside itself, level after level, collecting every skill over and over.  Here a linked folder
that leads back into a folder it is in is not collected, and a skill folder reached a second
way (another link to it, a skill root that is also under the test paths) is collected once: at
its real path when the run met it there, else at the first path met.  What was left out is
said once, after "collected N items", one line per link.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..links import RealPaths, SkippedLink, describe_all, shown_under


@dataclass
class CollectionLinks:
    """What one session's collection met: links not followed, skills reached twice."""

    rootdir: str
    real_paths: RealPaths = field(default_factory=RealPaths)
    loops: list[SkippedLink] = field(default_factory=list)
    #: (path kept, path left out) of each SKILL.md reached a second way.
    again: list[tuple[Path, Path]] = field(default_factory=list)

    def leads_back(self, path: Path) -> bool:
        """Whether the folder ``path`` is a link back into a folder it is in (then noted)."""
        name = os.fspath(path)
        if not os.path.islink(name) or not self.real_paths.leads_back(name):
            return False
        self.loops.append(SkippedLink(shown_under(name, self.rootdir), os.readlink(name)))
        return True

    def left_out(self, skill_files: list[tuple[Path, tuple[int, int] | None]]) -> set[Path]:
        """Of ``skill_files`` ((SKILL.md path, folder identity), in collection order), the paths
        of skills met another way too: each skill is kept once, at its real path when that was
        met (else at the path met first); the others are noted."""
        by_identity: dict[tuple[int, int], list[Path]] = {}
        for path, identity in skill_files:
            if identity is not None:
                by_identity.setdefault(identity, []).append(path)
        dropped: set[Path] = set()
        for paths in by_identity.values():
            if len(paths) == 1:
                continue  # the common case: no realpath() asked
            real = [path for path in paths if os.path.realpath(path) == os.fspath(path)]
            kept = real[0] if real else paths[0]
            for path in paths:
                if path != kept:
                    dropped.add(path)
                    self.again.append((kept, path))
        return dropped

    def report_lines(self) -> list[str]:
        lines = [f"agent-skills: {line}" for line in describe_all(self.loops)]
        by_link: dict[str, list[tuple[Path, Path]]] = {}
        for kept, again in self.again:
            link = self._link_between(kept, again)
            by_link.setdefault(link, []).append((kept, again))
        for link, pairs in by_link.items():
            kept, again = pairs[0]
            shown_kept = shown_under(str(kept), self.rootdir)
            shown_again = shown_under(str(again), self.rootdir)
            if len(pairs) == 1:
                lines.append(
                    f"agent-skills: {shown_again} is {shown_kept} ({link}): collected once,"
                    f" as {shown_kept}"
                )
            else:
                lines.append(
                    f"agent-skills: {len(pairs)} skills reached a second way ({link}): each"
                    f" collected once (e.g. {shown_kept}, not {shown_again})"
                )
        return lines

    def _link_between(self, kept: Path, again: Path) -> str:
        """The link that makes two paths one folder, as ``through link -> target``."""
        for path in (again, kept):
            link = self.real_paths.first_link(os.path.abspath(path.parent), self.rootdir)
            if link is not None:
                return f"through {shown_under(link, self.rootdir)} -> {os.readlink(link)}"
        return "the same folder"
