"""Glob matching confined to a folder tree.

``glob.glob(recursive=True)`` follows every directory symlink, so a command
that creates ``out/root -> /`` makes ``out/**`` walk the whole host (and a
loop walks forever).  This walker matches the same patterns - ``*``, ``?``,
``[...]`` within a segment, ``**`` for any number of segments, names starting
with a dot only when the pattern segment does - but descends into a directory
symlink only when its real path stays inside the allowed folders, visits each
real directory once, and stops after a bounded number of entries.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..excerpt import excerpt

#: Upper bound on directory entries examined per pattern.
MAX_SCANNED_ENTRIES = 200_000
_MAGIC = re.compile(r"[*?[]")


def translate(pattern: str) -> re.Pattern[str]:
    """A regular expression matching workspace-relative POSIX paths of files."""
    segments = [segment for segment in pattern.split("/") if segment not in ("", ".")]
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(r"(?:(?!\.)[^/]+/)*(?!\.)[^/]+" if last else r"(?:(?!\.)[^/]+/)*")
            continue
        parts.append(_segment(segment) + ("" if last else "/"))
    return re.compile("".join(parts) + r"\Z")


def _segment(segment: str) -> str:
    out = [r"(?!\.)"] if segment[0] in "*?[" else []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append(r"[^/]*")
        elif char == "?":
            out.append(r"[^/]")
        elif char == "[" and (close := segment.find("]", index + 2)) != -1:
            body = segment[index + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = close
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def literal_prefix(pattern: str) -> tuple[list[str], bool]:
    """The leading segments without wildcards, and whether the whole pattern is literal."""
    segments = [segment for segment in pattern.split("/") if segment not in ("", ".")]
    prefix: list[str] = []
    for segment in segments:
        if _MAGIC.search(segment):
            return prefix, False
        prefix.append(segment)
    return prefix, True


def iter_matches(
    real_root: Path, pattern: str, allowed: Sequence[Path], warnings: list[str]
) -> Iterator[str]:
    """Workspace-relative paths (as written, not resolved) of files matching ``pattern``."""
    prefix, is_literal = literal_prefix(pattern)
    if is_literal:
        if (real_root.joinpath(*prefix)).is_file():
            yield "/".join(prefix)
        return
    regex = translate(pattern)
    max_depth = None if "**" in pattern.split("/") else pattern.count("/") - len(prefix) + 1
    start = real_root.joinpath(*prefix)
    visited: set[str] = set()
    scanned = 0
    stack: list[tuple[str, str, int]] = [(str(start), "/".join(prefix), 0)]
    matches: list[str] = []
    while stack:
        folder, relative, depth = stack.pop()
        real = os.path.realpath(folder)
        if not is_inside(real, allowed):
            warnings.append(
                f"output_files pattern {excerpt(pattern)}: folder {excerpt(relative)} resolves"
                f" outside the workspace to {real!r}; not searched"
            )
            continue
        if real in visited or not os.path.isdir(folder):
            continue
        visited.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            scanned += 1
            if scanned > MAX_SCANNED_ENTRIES:
                warnings.append(
                    f"output_files pattern {excerpt(pattern)}: stopped after {MAX_SCANNED_ENTRIES}"
                    " entries; use a narrower pattern"
                )
                yield from sorted(matches)
                return
            child = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=True):
                if max_depth is None or depth + 1 < max_depth:
                    stack.append((entry.path, child, depth + 1))
            elif entry.is_file(follow_symlinks=True) and regex.match(child):  # no FIFOs
                matches.append(child)
    yield from sorted(matches)


def is_inside(real: str, allowed: Sequence[Path]) -> bool:
    """Whether the real path ``real`` is one of the ``allowed`` folders or lies below one."""
    return any(real == str(folder) or real.startswith(str(folder) + os.sep) for folder in allowed)
