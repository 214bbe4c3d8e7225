"""The common front matter read without PyYAML: mappings of text, lists of text, block text.

Most ``SKILL.md`` front matter is a handful of ``key: value`` lines and a nested mapping
(``metadata:`` and indented ``key: value`` lines under it); some have a description written
as a block (``description: |``), a list (``tags: ["a", "b"]``, ``- item`` lines, ``- name: x``
mappings).  Composing it with PyYAML costs more than every other step of loading a skill,
and importing PyYAML as much again: :func:`read_plain` reads these shapes directly and gives
what PyYAML gives (the data, each top-level key's line, the repeated keys).  Whenever the
text holds anything else - a value YAML reads as a number, a boolean, a date or null, an
anchor, a tag, a comment after a value, a tab, a flow mapping, a plain value running on over
lines, a block with an indentation indicator or starting with a blank line - it returns
None and the caller parses the text with PyYAML, which also words every error.
tests/skill/test_plainyaml.py holds it to PyYAML on generated front matter.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: Any line: its indentation, then a mapping line (a key of letters, digits, '_' and '-' - up
#: to 200 characters: YAML limits a simple key to 1024 - then ':' and the end of the line or
#: spaces and a value), a list item ('-' alone or '- ' and the item), a blank or comment line
#: (no group), or anything else.  (One search for all the lines: a match per line costs more
#: than the rest of the reading.)
_LINES = re.compile(
    r"^( *)(?:([A-Za-z_][A-Za-z0-9_-]{0,199}):(?: +(.*))?|(-(?= |$).*)|(?:#.*)?|(.+))$",
    re.MULTILINE,
)
#: A list item that is a mapping: its first key and value (as in :data:`_LINES`).  This and
#: the flow list's patterns are rare: compiled on first use (``re``'s cache keeps them).
_ITEM_KEY = r"([A-Za-z_][A-Za-z0-9_-]{0,199}):(?: +(.*))?"
#: Characters that send the text to PyYAML: controls, tabs, a BOM, YAML's other line breaks,
#: the non-characters U+FFFE and U+FFFF (and surrogates: see :func:`_has_unusual`).
_UNUSUAL = frozenset(
    [*map(chr, range(0x0A)), *map(chr, range(0x0B, 0x20)), *map(chr, range(0x7F, 0xA0)),
     "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff"]
)
#: What may not start a plain value (YAML indicators).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_DOUBLE_QUOTED = re.compile(r'"([^"\\]*)" *')
_SINGLE_QUOTED = re.compile(r"'((?:[^']|'')*)' *")
#: A list of quoted texts on one line (``["a", 'b']``), and each of its items.
_QUOTED = r'"[^"\\]*"|\'(?:[^\']|\'\')*\''
_FLOW_LIST = rf"\[ *(?:(?:{_QUOTED}) *(?:, *(?:{_QUOTED}) *)*)?\]"
_FLOW_ITEM = r'"([^"\\]*)"|\'((?:[^\']|\'\')*)\''

#: The block scalars read: literal or folded, clipped, stripped or kept; no indentation digit.
_BLOCK_HEADERS = frozenset({"|", "|-", "|+", ">", ">-", ">+"})
#: The first characters of a block scalar's header and of a flow list.
_STRUCTURED = frozenset("|>[")

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


def _has_unusual(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`_UNUSUAL` or a surrogate.  (No regular
    expression: a class of these characters took a millisecond to compile, and validation is
    a short program.)"""
    if text.isascii():  # then only controls and DEL are not printable: tabs, not newlines
        return not text.replace("\n", "").isprintable()
    try:
        text.encode()
    except UnicodeEncodeError:
        return True  # a lone surrogate cannot be encoded
    return not _UNUSUAL.isdisjoint(text)


def read_plain(text: str) -> PlainFrontMatter | None:
    """The front matter ``text`` (``\\n`` line ends) when it has a shape read here, else None."""
    if _has_unusual(text):
        return None
    reader = _Reader(text)
    try:
        data = reader.mapping(0)  # to the last line: no line stands left of column 0
    except _NotPlain:
        return None
    return PlainFrontMatter(data, reader.key_lines, reader.duplicates) if data else None


class _NotPlain(Exception):
    """The text holds what this reading does not settle: PyYAML reads it."""


class _Reader:
    """Block mappings and lists of the front matter's lines, read from the top down."""

    def __init__(self, text: str) -> None:
        self.text = text
        #: (indentation, key, value, list item, anything else) of each line.
        self.lines: list[tuple[str, str, str, str, str]] = _LINES.findall(text)
        self.index = 0  # the line read next
        self.key_lines: dict[str, int] = {}
        self.duplicates: list[tuple[str, int]] = []

    def next_line(self) -> tuple[str, str, str, str, str] | None:
        """The next line that is not blank nor a comment (made the line read next)."""
        lines = self.lines
        index = self.index
        while index < len(lines):
            line = lines[index]
            if line[1] or line[3] or line[4]:
                self.index = index
                return line
            index += 1
        self.index = index
        return None

    def mapping(self, column: int) -> dict[str, object]:
        """The mapping whose keys start at ``column``, to its last line."""
        found: dict[str, object] = {}
        lines = self.lines
        index = self.index
        while index < len(lines):
            spaces, key, raw, item, other = lines[index]
            if not (key or item or other):
                index += 1  # a blank or comment line
                continue
            indent = len(spaces)
            if indent < column:
                break
            if indent > column or not key:
                raise _NotPlain  # deeper indentation, a list item, a value running on
            if key[0] in _RESOLVER_SOURCES and not _is_text(key):
                raise _NotPlain
            if key in found:
                self.duplicates.append((key, index))
            if not column:
                self.key_lines.setdefault(key, index)
            if raw and raw[0] not in _STRUCTURED:  # the common case: text on the key's line
                value: object = _text(raw)
                index += 1
            else:
                self.index = index + 1
                value = self.value(raw, column) if raw else self.child(column)
                index = self.index
            found[key] = value
        self.index = index
        return found

    def child(self, column: int) -> object:
        """The value of a key (at ``column``) whose line ends at its ':': the mapping or list
        on the lines after it, else null."""
        line = self.next_line()
        if line is None:
            return None
        spaces, key, _raw, item, _other = line
        if item and len(spaces) >= column:  # a list may stand at its key's column
            return self.sequence(len(spaces))
        if key and len(spaces) > column:
            return self.mapping(len(spaces))
        return None

    def sequence(self, column: int) -> list[object]:
        """The list whose items' '-' stand at ``column``."""
        found: list[object] = []
        while (line := self.next_line()) is not None:
            spaces, _key, _raw, item, _other = line
            if len(spaces) < column or (len(spaces) == column and not item):
                break
            if len(spaces) > column or not item:
                raise _NotPlain
            text = item[1:].lstrip(" ")
            if not text:
                raise _NotPlain  # the item is on the lines after it
            entry = re.fullmatch(_ITEM_KEY, text)
            if entry is None:
                found.append(_text(text))
                self.index += 1
                continue
            # A mapping: its first key stands after the '- ', the others below it.
            key_column = column + len(item) - len(text)
            key, raw = entry.groups("")
            self.lines[self.index] = (" " * key_column, key, raw, "", "")
            found.append(self.mapping(key_column))
        return found

    def value(self, raw: str, column: int) -> object:
        """The value written after a key (at ``column``) on its line."""
        raw = raw.rstrip(" ")
        if raw in _BLOCK_HEADERS:
            return self.block(raw, column)
        if raw[0] == "[":
            return _flow_list(raw)
        return _text(raw)

    def block(self, header: str, column: int) -> str:
        """The block scalar after a key at ``column``, as PyYAML's ``scan_block_scalar`` reads
        it; its first line must hold text, more indented than the key."""
        lines = self.text.split("\n")
        index = self.index
        count = len(lines)
        if index >= count:
            raise _NotPlain
        indent = len(lines[index]) - len(lines[index].lstrip(" "))
        if indent <= column or indent == len(lines[index]):
            raise _NotPlain
        margin = " " * indent
        folded = header[0] == ">"
        chunks: list[str] = []
        breaks: list[str] = []
        while True:  # lines[index] starts with the margin and holds more
            chunks.extend(breaks)
            content = lines[index][indent:]
            chunks.append(content)
            index += 1
            line_break = "\n" if index < count else ""
            breaks = []
            # Lines of spaces no longer than the margin, each followed by a line break.
            while index < count - 1 and len(lines[index]) <= indent and not lines[index].strip(" "):
                breaks.append("\n")
                index += 1
            if index == count or len(lines[index]) <= indent or not lines[index].startswith(margin):
                break
            if folded and line_break and content[0] != " " and lines[index][indent] != " ":
                if not breaks:
                    chunks.append(" ")
            else:
                chunks.append(line_break)
        if header[1:] != "-":
            chunks.append(line_break)
        if header[1:] == "+":
            chunks.extend(breaks)
        self.index = index
        return "".join(chunks)


def _flow_list(raw: str) -> list[object]:
    """The quoted texts of a one-line flow list (``["a", 'b']``)."""
    if re.fullmatch(_FLOW_LIST, raw) is None:
        raise _NotPlain
    return [
        double if double is not None else single.replace("''", "'")
        for double, single in (match.groups() for match in re.finditer(_FLOW_ITEM, raw))
    ]


def _text(raw: str) -> str:
    """The text of a value written on one line (quoted or plain); raises :class:`_NotPlain`
    for any other value."""
    raw = raw.rstrip(" ")
    first = raw[0]
    if first == '"':
        quoted = _DOUBLE_QUOTED.fullmatch(raw)
        if quoted is None:
            raise _NotPlain
        return quoted.group(1)
    if first == "'":
        quoted = _SINGLE_QUOTED.fullmatch(raw)
        if quoted is None:
            raise _NotPlain
        return quoted.group(1).replace("''", "'")
    if first in _INDICATORS or ": " in raw or " #" in raw or raw[-1] == ":":
        raise _NotPlain
    if first in _RESOLVER_SOURCES and not _is_text(raw):
        raise _NotPlain  # a number, a boolean, a date, null
    return raw


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
