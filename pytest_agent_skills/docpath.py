"""Paths into a YAML or JSON document (mapping keys and sequence indexes), as messages show
them: ``expect.calls.items[0]``."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

#: A path into a document: mapping keys and sequence indexes.
DocPath = tuple[Any, ...]

#: Where a document's ``$schema`` points: the schemas ship in the package (``schemas/``) and
#: ``agent-skills schema NAME`` prints one; the value ends in ``/<name>.schema.json``.
SCHEMA_BASE = "pytest-agent-skills:schemas/"


def schema_uri(name: str) -> str:
    """The ``$schema`` value of the document called ``name`` (here, not beside the models, so
    that a report printed without pydantic names its schema too)."""
    return f"{SCHEMA_BASE}{name}.schema.json"


def dotted(doc_path: DocPath) -> str:
    """``expect.calls.items[0]``: a path into the document as the messages show it."""
    text = ""
    for part in doc_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def nearest_line(
    lines: Mapping[DocPath, int], doc_path: DocPath, *, root: bool = False
) -> int | None:
    """The line of ``doc_path`` in ``lines``, or of its nearest ancestor that has one; the
    document's own line (path ``()``) counts only with ``root`` (a JSON file's first line, where
    a YAML document's caller has a better line of its own)."""
    last = -1 if root else 0
    for end in range(len(doc_path), last, -1):
        line = lines.get(tuple(doc_path[:end]))
        if line:
            return line
    return None


def unknown_key(key: Any, known: Sequence[str], where: str) -> str:
    """The one wording of a mapping key at ``where`` that is none of ``known``: the nearest
    known key, when one is close, and all of them."""
    import difflib  # on an error's path only: validate starts without it

    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"unknown key {key!r} in {where}.{hint} Known keys: {', '.join(known)}."


def unknown_schema_key(error: Any, lines: Mapping[DocPath, int], where: str) -> tuple[DocPath, str]:
    """A schema's ``additionalProperties`` error: the path of its first unknown key (by line)
    and :func:`unknown_key`'s message for it."""
    doc_path = tuple(error.absolute_path)
    known = sorted(error.schema.get("properties", {}))
    unknown = [key for key in error.instance if key not in known]
    key = min(unknown, key=lambda k: lines.get((*doc_path, k), 0))
    return (*doc_path, key), unknown_key(key, known, where)


def kind_of(value: Any, *, yaml: bool = False) -> str:
    """What a parsed JSON value is, as a message says what it found: ``an object``, ``a list``,
    ``null``, ``a boolean (true)``, ``a string "abc"``, ``a number 3`` (long text cut).

    The one wording of every such message.  ``yaml``: in the words of a YAML document (a front
    matter, a scenario): ``a mapping``, ``an empty value`` (``key:``), ``a date (2024-01-02)``.
    """
    if value is None:
        return "an empty value" if yaml else "null"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, dict):
        return "a mapping" if yaml else "an object"
    if isinstance(value, list):
        return "a list"
    if _is_date(value):
        return f"a date ({value})"
    shown = json.dumps(value, ensure_ascii=False, default=repr)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if isinstance(value, str):
        return f"a string {shown}"
    if isinstance(value, (int, float)):
        return f"a number {shown}"
    return f"a {type(value).__name__} {shown}"


def _is_date(value: Any) -> bool:
    """Whether ``value`` is a date or a time (YAML reads ``2024-01-02`` as one).  No value is
    one unless ``datetime`` was imported (by PyYAML's reading, by who made the value), so a
    run that met none does not import it."""
    dates = sys.modules.get("datetime")
    return dates is not None and isinstance(value, (dates.date, dates.datetime))


#: JSON Schema's type names in the words of :func:`kind_of`.
_TYPE_WORDS = {
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
}


def type_mismatch(types: str | list[str], value: Any, *, yaml: bool = False) -> str:
    """A schema's ``type`` error in the words of :func:`kind_of`: ``(["object", "string"],
    [1])`` -> ``expected an object or a string, found a list``."""
    words = {**_TYPE_WORDS, "object": kind_of({}, yaml=yaml), "null": kind_of(None, yaml=yaml)}
    names = types if isinstance(types, list) else [types]
    expected = " or ".join(words.get(name, f"a {name}") for name in names)
    return f"expected {expected}, found {kind_of(value, yaml=yaml)}"
