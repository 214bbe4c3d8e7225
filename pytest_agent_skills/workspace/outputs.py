"""Collect ``output_files`` globs into :class:`OutputFile` entries, confined to the workspace.

Patterns are relative to the workspace root (as in the reference); the
prefixes ``$OUTPUT_DIR``, ``$WORK_DIR``, ``$SKILLS_DIR``, ``$WORKSPACE_DIR``
and ``$RUN_DIR`` (also in ``${...}`` form) are rewritten to their folders.
A pattern that is absolute outside the workspace or climbs out with ``..``,
and a match whose real path lies outside the workspace (a symlink to
``/etc/passwd``), is refused with a warning in the result - never silently.
Files of a link-staged skill resolve into the skill's source folder, which is
also allowed.  Like the reference, globs skip dotfiles and report each real
file once; unlike Python's ``glob``, ``**`` never follows a symlink out of the
workspace (see :mod:`.globbing`).
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..excerpt import excerpt
from .capture import decode_head
from .confined import open_inside
from .globbing import is_inside, iter_matches
from .result import INLINE_FILE_CAP_BYTES, INLINE_TOTAL_CAP_BYTES, MAX_OUTPUT_FILES, OutputFile

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)
_TEXT_LIKE = ("json", "xml", "yaml", "toml", "csv", "javascript", "x-sh", "x-python", "sql")


@dataclass
class Collection:
    files: list[OutputFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def collect_outputs(
    patterns: Sequence[str],
    *,
    root: Path,
    expand: Callable[[str], str],
    allowed_outside: Iterable[tuple[Path, str]] = (),
) -> Collection:
    """Match ``patterns`` under the workspace ``root``.

    ``allowed_outside`` pairs a real folder outside the workspace (a skill's
    source, for link staging) with the workspace-relative name it has there.
    """
    collection = Collection()
    if not patterns:
        return collection
    real_root = root.resolve()
    outside = [(source.resolve(), name) for source, name in allowed_outside]
    allowed = [real_root, *(source for source, _ in outside)]
    seen: set[Path] = set()
    inline_budget = INLINE_TOTAL_CAP_BYTES
    for pattern in patterns:
        relative = _relative_pattern(pattern, real_root, expand, collection.warnings)
        if relative is None:
            continue
        for match in iter_matches(real_root, relative, allowed, collection.warnings):
            real = (real_root / match).resolve()
            name = _name_inside(real, real_root, outside)
            if name is None:
                collection.warnings.append(
                    f"output file {excerpt(match)} (pattern {excerpt(pattern)}) resolves outside"
                    f" the workspace to {str(real)!r}; not collected"
                )
                continue
            if real in seen:
                continue
            seen.add(real)
            if len(collection.files) >= MAX_OUTPUT_FILES:
                collection.warnings.append(
                    f"more than {MAX_OUTPUT_FILES} output files matched;"
                    " the rest were not collected"
                )
                return collection
            try:
                output, used = read_output(name, real, inline_budget, allowed)
            except OSError as error:
                collection.warnings.append(f"output file {name!r} cannot be read: {error}")
                continue
            inline_budget -= used
            if output.is_text and used < min(output.size_bytes, INLINE_FILE_CAP_BYTES):
                collection.warnings.append(
                    f"output file {name!r}: inline content cut at the total cap of"
                    f" {INLINE_TOTAL_CAP_BYTES} bytes per run"
                )
            elif output.truncated:
                collection.warnings.append(
                    f"output file {name!r} is {output.size_bytes} bytes; inline content cut at"
                    f" {INLINE_FILE_CAP_BYTES} bytes"
                )
            collection.files.append(output)
    return collection


def _relative_pattern(
    pattern: str, real_root: Path, expand: Callable[[str], str], warnings: list[str]
) -> str | None:
    text = expand(pattern.strip())
    if os.path.isabs(text):
        absolute = os.path.normpath(text)
        if not is_inside(absolute, [real_root]):
            warnings.append(
                f"output_files pattern {excerpt(pattern)} is outside the workspace; ignored"
            )
            return None
        text = os.path.relpath(absolute, real_root)
    if not text or ".." in Path(text).parts:
        warnings.append(
            f"output_files pattern {excerpt(pattern)} climbs out of the workspace with '..';"
            " ignored"
        )
        return None
    return text


def _name_inside(real: Path, real_root: Path, outside: list[tuple[Path, str]]) -> str | None:
    if real.is_relative_to(real_root):
        return real.relative_to(real_root).as_posix()
    for source, name in outside:
        if real.is_relative_to(source):
            return f"{name}/{real.relative_to(source).as_posix()}"
    return None


def read_output(
    name: str, path: Path, budget: int, allowed: Sequence[Path]
) -> tuple[OutputFile, int]:
    """Read the head of one file (never more than the inline cap): MIME type, text or binary,
    inline content within the caps.  The file must really lie in one of ``allowed``.

    Returns the entry and the number of inline bytes it used.
    """
    limit = max(0, min(INLINE_FILE_CAP_BYTES, budget))
    with open_inside(path, allowed) as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(max(limit, 8192))
    mime = detect_mime(name, head)
    is_text = _looks_text(mime, head)
    content = ""
    used = 0
    if is_text and limit > 0:
        kept = head[:limit]
        content, valid = decode_head(kept, cut=len(kept) < size)
        if not valid:
            is_text, content = False, ""
        else:
            used = len(kept)
    truncated = is_text and used < size
    return OutputFile(name, content, mime, size, truncated, path, is_text), used


def detect_mime(name: str, head: bytes) -> str:
    guessed, _ = mimetypes.guess_type(name, strict=False)
    if guessed:
        return guessed
    for signature, mime in _SIGNATURES:
        if head.startswith(signature):
            return mime
    if b"\0" not in head and decode_head(head, cut=True)[1]:
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


def _looks_text(mime: str, head: bytes) -> bool:
    text_like = mime.startswith("text/") or any(token in mime for token in _TEXT_LIKE)
    return text_like and b"\0" not in head
