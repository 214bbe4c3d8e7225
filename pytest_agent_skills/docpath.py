"""Paths into a YAML or JSON document (mapping keys and sequence indexes), as messages show
them: ``expect.calls.items[0]``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: A path into a document: mapping keys and sequence indexes.
DocPath = tuple[Any, ...]


def dotted(doc_path: DocPath) -> str:
    """``expect.calls.items[0]``: a path into the document as the messages show it."""
    text = ""
    for part in doc_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def nearest_line(lines: Mapping[DocPath, int], doc_path: DocPath) -> int | None:
    """The line of ``doc_path`` in ``lines``, or of its nearest ancestor that has one."""
    for end in range(len(doc_path), 0, -1):
        line = lines.get(tuple(doc_path[:end]))
        if line:
            return line
    return None


def kind_of(value: Any) -> str:
    """What a JSON value is, as a message says what it found: ``an object``, ``a list``,
    ``null``, ``a boolean (true)``, ``a string "abc"``, ``a number 3`` (long text cut)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if isinstance(value, str):
        return f"a string {shown}"
    if isinstance(value, (int, float)):
        return f"a number {shown}"
    return f"a {type(value).__name__} {shown}"
