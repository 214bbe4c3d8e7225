"""The common front matter read without PyYAML: ``key: value`` lines whose values are text.

Most ``SKILL.md`` front matter is a handful of such lines, and one level of nesting
(``metadata:`` and indented ``key: value`` lines under it).  Composing it with PyYAML
costs more than every other step of loading a skill; :func:`read_plain` reads that
common shape directly and gives what PyYAML gives (the data, each key's line, the repeated
keys).  Whenever the text holds anything else - a value YAML reads as a number, a boolean,
a date or null, a list, a block scalar, an anchor, a comment after a value, a tab, a
value running on over lines - it returns None and the caller parses the text with PyYAML,
which also words every error.  tests/skill/test_plainyaml.py holds it to PyYAML on generated
front matter.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from . import yamlguard

#: A mapping line: indentation, a key of letters, digits, '_' and '-' (up to 200 characters:
#: YAML limits a simple key to 1024), ':' and the end of the line or spaces and a value.
_KEY_LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_-]{0,199}):(?: +(.*))?")
#: Characters outside this set (controls, tabs, a BOM, YAML's other line breaks, surrogates)
#: send the text to PyYAML.
_UNUSUAL = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
#: What may not start a plain value (YAML indicators).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_DOUBLE_QUOTED = re.compile(r'"([^"\\]*)" *')
_SINGLE_QUOTED = re.compile(r"'((?:[^']|'')*)' *")
_IMPLICIT = yamlguard.LOADER.yaml_implicit_resolvers
_WILDCARDS = tuple(pattern for _tag, pattern in _IMPLICIT.get(None, []))
#: PyYAML's implicit resolvers (bool, int, float, null, timestamp, merge, value) by the first
#: character they apply to, then the wildcards: the order ``Resolver.resolve`` tries them in.
_RESOLVERS = {
    char: tuple(pattern for _tag, pattern in resolvers) + _WILDCARDS
    for char, resolvers in _IMPLICIT.items()
    if char is not None
}


class PlainFrontMatter(NamedTuple):
    """What PyYAML reads from the text: the data, the 0-based line of each top-level key
    (its first occurrence), and each repeated key with its 0-based line, in line order."""

    data: dict[str, object]
    key_lines: dict[str, int]
    duplicates: list[tuple[str, int]]


def read_plain(text: str) -> PlainFrontMatter | None:
    """The front matter ``text`` (``\\n`` line ends) when it has the common shape, else None."""
    if _UNUSUAL.search(text):
        return None
    lines = text.split("\n")
    data: dict[str, object] = {}
    key_lines: dict[str, int] = {}
    duplicates: list[tuple[str, int]] = []
    nested: dict[str, object] | None = None  # the mapping indented lines go into
    nested_indent = 0
    open_key: str | None = None  # a top-level key whose value may be a nested mapping
    for index, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue  # a blank or comment line
        match = _KEY_LINE.fullmatch(line)
        if match is None:
            return None
        spaces, key, raw = match.groups()
        indent = len(spaces)
        if not _is_text(key):
            return None
        if indent == 0:
            mapping = data
            nested = None
            key_lines.setdefault(key, index)
        elif nested is not None and indent == nested_indent:
            mapping = nested
        elif open_key is not None and nested is None:
            nested, nested_indent = {}, indent
            data[open_key] = mapping = nested
        else:
            return None  # deeper nesting, or an indented line after a value
        value = _value(raw) if raw else None
        if value is _NOT_PLAIN:
            return None
        if key in mapping:
            duplicates.append((key, index))
        mapping[key] = value
        open_key = key if indent == 0 and value is None else None
    if not data:
        return None
    return PlainFrontMatter(data, key_lines, duplicates)


_NOT_PLAIN = object()


def _value(raw: str) -> object:
    """The text of a one-line value, or ``_NOT_PLAIN``."""
    raw = raw.rstrip(" ")
    first = raw[0]
    if first == '"':
        quoted = _DOUBLE_QUOTED.fullmatch(raw)
        return quoted.group(1) if quoted else _NOT_PLAIN
    if first == "'":
        quoted = _SINGLE_QUOTED.fullmatch(raw)
        return quoted.group(1).replace("''", "'") if quoted else _NOT_PLAIN
    if first in _INDICATORS or ": " in raw or " #" in raw or raw[-1] == ":" or not _is_text(raw):
        return _NOT_PLAIN
    return raw


def _is_text(plain: str) -> bool:
    """Whether YAML reads the plain scalar ``plain`` as text: no implicit resolver (bool,
    int, float, null, timestamp, merge, value) matches it, as in ``Resolver.resolve``."""
    patterns = _RESOLVERS.get(plain[0], _WILDCARDS)
    return not patterns or not any(pattern.match(plain) for pattern in patterns)
