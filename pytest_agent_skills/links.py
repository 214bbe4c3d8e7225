"""Symbolic links met while walking a skill repository, and what the walk says about them.

A real repository links folders: ``plugins/uipath -> ..`` (a link back into a folder it is
in: following it never ends), ``plugins/shared -> ../skills/shared`` (a second way to skills
already walked).  Whoever walks (pytest's collection, the CLI's discovery, a skill
repository) walks each real folder once and never follows a link back into one of its
folders; what it left out is said once per link, never once per file below it.

No import beyond the standard library: pytest asks about every folder it collects.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple


class SkippedLink(NamedTuple):
    """A folder a walk did not enter: ``link`` as the walk named it, its ``target`` as written
    (None when it is no link: a bind mount, a folder given twice), and ``walked``: where its
    folder was walked already (None when the link leads back into a folder it is in)."""

    link: str
    target: str | None
    walked: str | None = None

    def describe(self) -> str:
        if self.walked is None:
            return (
                f"{self.link} -> {self.target}: a symbolic link back into a folder it is in,"
                " not followed"
            )
        if self.target is None:
            return f"{self.link}: the same folder as {self.walked}, walked already"
        return f"{self.link} -> {self.target}: leads to {self.walked}, walked already"


def skipped_link(path: str, walked: str | None) -> SkippedLink:
    """The :class:`SkippedLink` of the folder ``path`` (its target read when it is a link)."""
    try:
        target: str | None = os.readlink(path)
    except OSError:
        target = None
    shown = os.path.normpath(walked) if walked is not None else None
    return SkippedLink(os.path.normpath(path), target, shown)


class RealPaths:
    """``os.path.realpath`` of folders, each asked once (the ancestors of many links are
    the same few folders)."""

    def __init__(self) -> None:
        self._found: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        found = self._found.get(path)
        if found is None:
            found = self._found[path] = os.path.realpath(path)
        return found

    def leads_back(self, path: str) -> bool:
        """Whether the folder ``path`` is a symbolic link to one of the folders it is in
        (following it would walk them again, without end)."""
        if not os.path.islink(path):
            return False
        real = os.path.realpath(path)
        parent = os.path.dirname(os.path.abspath(path))
        while True:
            if self(parent) == real:
                return True
            above = os.path.dirname(parent)
            if above == parent:
                return False
            parent = above

    def first_link(self, path: str, top: str) -> str | None:
        """The first folder on the way from ``top`` down to ``path`` that is a symbolic
        link (``top`` and ``path`` absolute), or None."""
        relative = os.path.relpath(path, top)
        if relative.startswith(".."):
            return None
        current = top
        for part in relative.split(os.sep):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return current
        return None


def shown_under(path: str, folder: str | os.PathLike[str]) -> str:
    """``path`` relative to ``folder`` when under it, else as it is (as reports show paths)."""
    relative = os.path.relpath(path, folder)
    return path if relative.startswith("..") else relative


def describe_all(skipped: Iterable[SkippedLink]) -> list[str]:
    """One line per skipped link, each link once, in the order met."""
    lines: dict[str, None] = {}
    for link in skipped:
        lines.setdefault(link.describe(), None)
    return list(lines)
