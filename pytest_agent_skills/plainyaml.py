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

#: Every line of the common shape: a mapping line - indentation, a key of letters, digits, '_'
#: and '-' (up to 200 characters: YAML limits a simple key to 1024), ':' and the end of the
#: line or spaces and a value - else a blank or comment line (no key).  (One search for all
#: the lines: a match per line costs more than the rest of the reading.)
_LINES = re.compile(
    r"^(?:( *)([A-Za-z_][A-Za-z0-9_-]{0,199}):(?: +(.*))?| *(?:#.*)?)$", re.MULTILINE
)
#: Characters that send the text to PyYAML: controls, tabs, a BOM, YAML's other line breaks,
#: surrogates, the non-characters U+FFFE and U+FFFF.  (Named one by one: the class of every
#: other character, astral ones included, takes milliseconds to compile.)
_UNUSUAL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
#: What may not start a plain value (YAML indicators).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_DOUBLE_QUOTED = re.compile(r'"([^"\\]*)" *')
_SINGLE_QUOTED = re.compile(r"'((?:[^']|'')*)' *")

#: PyYAML's implicit resolvers, as ``yaml.resolver.Resolver`` adds them: (tag, pattern, flags,
#: the first characters of the plain scalars it is tried on), in its order (the null one is
#: tried on the empty scalar too, which no key or value read here is).  A copy, so that
#: reading the common front matter imports no PyYAML; tests/skill/test_plainyaml.py holds it
#: to PyYAML's own table.
IMPLICIT_RESOLVERS: tuple[tuple[str, str, int, str], ...] = (
    (
        "tag:yaml.org,2002:bool",
        r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""",
        re.X,
        "yYnNtTfFoO",
    ),
    (
        "tag:yaml.org,2002:float",
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""",
        re.X,
        "-+0123456789.",
    ),
    (
        "tag:yaml.org,2002:int",
        r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""",
        re.X,
        "-+0123456789",
    ),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", 0, "<"),
    (
        "tag:yaml.org,2002:null",
        r"""^(?: ~
                    |null|Null|NULL
                    | )$""",
        re.X,
        "~nN",
    ),
    (
        "tag:yaml.org,2002:timestamp",
        r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
        re.X,
        "0123456789",
    ),
    ("tag:yaml.org,2002:value", r"^(?:=)$", 0, "="),
    ("tag:yaml.org,2002:yaml", r"^(?:!|&|\*)$", 0, "!&*"),
)
def _by_first_character() -> dict[str, list[tuple[str, int]]]:
    """(pattern, flags) of the resolvers of each first character, in the order
    ``Resolver.resolve`` tries them."""
    found: dict[str, list[tuple[str, int]]] = {}
    for _tag, pattern, flags, firsts in IMPLICIT_RESOLVERS:
        for first in firsts:
            found.setdefault(first, []).append((pattern, flags))
    return found


_RESOLVER_SOURCES = _by_first_character()
#: Those compiled, on first use (most plain scalars start with a letter none applies to).
_RESOLVERS: dict[str, tuple[re.Pattern[str], ...]] = {}


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
    lines = _LINES.findall(text)
    if len(lines) != text.count("\n") + 1:
        return None  # a line of another shape
    data: dict[str, object] = {}
    key_lines: dict[str, int] = {}
    duplicates: list[tuple[str, int]] = []
    nested: dict[str, object] | None = None  # the mapping indented lines go into
    nested_indent = 0
    open_key: str | None = None  # a top-level key whose value may be a nested mapping
    for index, (spaces, key, raw) in enumerate(lines):
        if not key:
            continue  # a blank or comment line
        if key[0] in _RESOLVER_SOURCES and not _is_text(key):
            return None
        if not spaces:
            mapping = data
            nested = None
            key_lines.setdefault(key, index)
        elif nested is not None and len(spaces) == nested_indent:
            mapping = nested
        elif open_key is not None and nested is None:
            nested, nested_indent = {}, len(spaces)
            data[open_key] = mapping = nested
        else:
            return None  # deeper nesting, or an indented line after a value
        value = _value(raw) if raw else None
        if value is _NOT_PLAIN:
            return None
        if key in mapping:
            duplicates.append((key, index))
        mapping[key] = value
        open_key = key if value is None and not spaces else None
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
    if first in _INDICATORS or ": " in raw or " #" in raw or raw[-1] == ":":
        return _NOT_PLAIN
    return raw if first not in _RESOLVER_SOURCES or _is_text(raw) else _NOT_PLAIN


def _is_text(plain: str) -> bool:
    """Whether YAML reads the plain scalar ``plain`` as text: no implicit resolver (bool,
    int, float, null, timestamp, merge, value) matches it, as in ``Resolver.resolve``."""
    first = plain[0]
    patterns = _RESOLVERS.get(first)
    if patterns is None:
        sources = _RESOLVER_SOURCES.get(first)
        if sources is None:
            return True
        patterns = _RESOLVERS[first] = tuple(re.compile(*source) for source in sources)
    return not any(pattern.match(plain) for pattern in patterns)
