"""Assertions on a workspace's output files, usable without pytest.

Each raises :class:`AssertionError` with a message naming the file, what was
expected and what was found.  :func:`compare_with_expected` checks a file
against a stored expected copy and, when asked, writes that copy instead
(the syrupy / pytest-examples "update" manner).
"""

from __future__ import annotations

import difflib
import re
from enum import Enum
from pathlib import Path

from .layout import Layout

_SHOWN_FILES = 20


class ExpectedStatus(str, Enum):
    SAME = "same"
    CREATED = "created"
    UPDATED = "updated"


def output_path(root: Path, name: str) -> Path:
    """The host path of ``name`` (workspace-relative, e.g. ``out/report.txt``), which must exist."""
    __tracebackhide__ = True
    path = Layout(root).confine(name, root, "output file")
    if not path.is_file():
        raise AssertionError(f"output file {name!r} does not exist; {_listing(root)}")
    return path


def assert_output_exists(root: Path, name: str) -> Path:
    __tracebackhide__ = True
    return output_path(root, name)


def assert_output_contains(root: Path, name: str, text: str) -> str:
    __tracebackhide__ = True
    content = _read_text(root, name)
    if text not in content:
        raise AssertionError(
            f"output file {name!r} does not contain {text!r}; it holds {len(content)} characters:"
            f"\n{_excerpt(content)}"
        )
    return content


def assert_output_matches(root: Path, name: str, pattern: str) -> re.Match[str]:
    __tracebackhide__ = True
    content = _read_text(root, name)
    match = re.search(pattern, content, re.MULTILINE)
    if match is None:
        raise AssertionError(
            f"output file {name!r} has no match for the pattern {pattern!r}; it holds:"
            f"\n{_excerpt(content)}"
        )
    return match


def compare_with_expected(root: Path, name: str, expected: Path, *, update: bool) -> ExpectedStatus:
    """Compare an output file byte for byte with ``expected``; with ``update``, rewrite it."""
    __tracebackhide__ = True
    actual = output_path(root, name).read_bytes()
    if not expected.exists():
        if update:
            expected.parent.mkdir(parents=True, exist_ok=True)
            expected.write_bytes(actual)
            return ExpectedStatus.CREATED
        raise AssertionError(
            f"expected file {expected} does not exist (for output {name!r}); run pytest with"
            " --skills-update-expected to create it from this output"
        )
    stored = expected.read_bytes()
    if stored == actual:
        return ExpectedStatus.SAME
    if update:
        expected.write_bytes(actual)
        return ExpectedStatus.UPDATED
    raise AssertionError(
        f"output file {name!r} differs from the expected file {expected}"
        " (run pytest with --skills-update-expected to accept the new output):\n"
        + _diff(stored, actual, str(expected), name)
    )


def _read_text(root: Path, name: str) -> str:
    __tracebackhide__ = True
    data = output_path(root, name).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AssertionError(
            f"output file {name!r} is not UTF-8 text (byte {data[error.start]:#04x} at offset"
            f" {error.start}); compare it with an expected file instead"
        ) from None


def _diff(stored: bytes, actual: bytes, expected_name: str, actual_name: str) -> str:
    try:
        old, new = stored.decode("utf-8"), actual.decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary: expected {len(stored)} bytes, got {len(actual)} bytes)"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), expected_name, actual_name
    )
    return "".join(lines)


def _excerpt(content: str, limit: int = 2000) -> str:
    return content if len(content) <= limit else content[:limit] + f"... ({len(content)} chars)"


def _listing(root: Path) -> str:
    out = root / "out"
    names = (
        sorted(path.relative_to(root).as_posix() for path in out.rglob("*") if path.is_file())
        if out.is_dir()
        else []
    )
    if not names:
        return "out/ is empty"
    shown = ", ".join(names[:_SHOWN_FILES]) + (" ..." if len(names) > _SHOWN_FILES else "")
    return f"out/ holds: {shown}"
