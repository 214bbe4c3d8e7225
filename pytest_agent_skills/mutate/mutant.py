"""A mutant: one named change of one file of a skill, with its unified diff."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """A change an operator proposes: ``text`` is the file's new content, None when the
    mutant removes the file."""

    operator: str
    file: str
    line: int
    text: str | None


@dataclass(frozen=True)
class Mutant:
    """A selected change, numbered: what the report lists and a copy of the skill carries."""

    id: str
    operator: str
    file: str
    line: int
    #: The file's new content; None: the file is removed.
    text: str | None
    diff: str


def spliced(lines: Sequence[str], start: int, end: int, new: Sequence[str] = ()) -> str:
    """The text of ``lines`` with ``lines[start:end]`` replaced by ``new``."""
    return "".join([*lines[:start], *new, *lines[end:]])


def unified_diff(file: str, before: str, after: str | None) -> str:
    """The change of ``file`` as a unified diff (``/dev/null`` as the new side of a removal)."""
    new_name = f"b/{file}" if after is not None else "/dev/null"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile=f"a/{file}",
        tofile=new_name,
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
