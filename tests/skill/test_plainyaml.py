"""The front matter read without PyYAML gives exactly what PyYAML gives, or nothing.

Generated texts mix the common shape (``key: value`` lines, one nested mapping) with what
YAML reads differently: numbers, booleans, dates, null, quotes, indicators, comments, tabs,
odd indentation, repeated keys; and mappings nested deeper, block text (``|``, ``>-``: blank
lines, lines of spaces, more indented lines), flow lists and block lists of text and of
mappings, with their own odd variants.  Whenever :func:`read_plain` answers, PyYAML reads the
same data, key lines and repeated keys; when PyYAML refuses a text, :func:`read_plain` does too.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agent_skills.plainyaml import IMPLICIT_RESOLVERS, read_plain
from pytest_agent_skills.yamlguard import duplicate_keys
from tests.support.corpus import CORPUS

COMMON_KEYS = ("name", "description", "license", "metadata", "author", "version", "a-b", "_x")
KEYS = (
    "Name", "y", "n", "yes", "on", "Off", "null", "NULL", "true", "x1", "1a", "<<", "=",
    "a b", "é", "a:b", "x.y", "1", "~",
)
COMMON_VALUES = (
    "x", "Summarises CSV files. Use when asked.", "C#", "a:b", "a#b", "'q'", "'it''s'", '"q"',
    "Use [x] {y}", "https://example.com/a?b=c#d", "ünïcödé", "\u00a0x", "x\u00a0", "x  ",
    "a 'q' \"r\"", "",
)
VALUES = (
    "yes", "No", "on", "true", "null", "~", "1", "1.5", "-1", "0x1f", "1_000", "1:20", ".inf",
    "-.NaN", "2024-01-02", "2024-01-02 10:00:00", "a: b", "a #b", "x:", "'unclosed",
    '"a\\"b"', '"a\\nb"', '"unclosed', "[x]", "{y: z}", "-x", "- x", "?x", ":x", ",x", "%x",
    "@x", "`x", "!x", "!!str 1", "&a x", "*a", "|", ">", "|-", "x\ty", "a\u2028b", "a\x85b",
    "\ufeffx", "  x", "---", "...", "=", "<<",
    "a --- b", "1e3", "0o17", "0b101", "+1", ".5", "1.", "1_0.5", "12:30:45", "Yes", "NO", "~x",
    "2001-12-14t21:59:43.10-05:00", "a\\b", "\"a\\tb\"", "'a\\nb'", "x\r", "x\u3000",
)
INDENTS = (" ", "    ", "\t", "   ")
EXTRA_LINES = (
    "", "# comment", "  # indented comment", "   ", "- item", "  - item", "...", "---",
    "  more words", "more words", "\tx: y",
)


def rarely(draw: st.DrawFn, common: tuple[str, ...], rare: tuple[str, ...]) -> str:
    """Mostly one of ``common``, one time in eight one of ``rare``."""
    return draw(st.sampled_from(rare if draw(st.integers(0, 7)) == 0 else common))


@st.composite
def front_matter(draw: st.DrawFn) -> str:
    lines = []
    nested = False  # the previous key opened a mapping: indent the next lines
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(EXTRA_LINES)))
            continue
        indent = rarely(draw, ("  ",) if nested and draw(st.booleans()) else ("",), INDENTS)
        key = rarely(draw, COMMON_KEYS, KEYS)
        separator = rarely(draw, (": ",), (":  ", ":", " : "))
        value = rarely(draw, COMMON_VALUES, VALUES) if separator != ":" else ""
        trail = rarely(draw, ("",), (" ", " # c"))
        lines.append(f"{indent}{key}{separator}{value}{trail}")
        nested = nested or (indent == "" and value == "")
    return "\n".join(lines)


def pyyaml_reading(text: str) -> tuple[object, dict[str, int], list[tuple[str, int]]] | None:
    """(data, 0-based key lines, repeated keys) as PyYAML reads ``text``; None on an error."""
    loader = yaml.CSafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    key_lines: dict[str, int] = {}
    duplicates: list[tuple[str, int]] = []
    if isinstance(node, yaml.MappingNode):
        for key_node, _value in node.value:
            key_lines.setdefault(str(key_node.value), key_node.start_mark.line)
        duplicates = sorted(duplicate_keys(node), key=lambda item: item[1])
    return data, key_lines, duplicates


ANSWERED: list[str] = []


@settings(max_examples=4000, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(front_matter())
def check_against_pyyaml(text: str) -> None:
    assert_read_as_pyyaml_reads(text, ANSWERED)


def assert_read_as_pyyaml_reads(text: str, answered: list[str]) -> None:
    """What ``read_plain`` reads of ``text`` (added to ``answered``) is what PyYAML reads."""
    plain = read_plain(text)
    if plain is None:
        return
    answered.append(text)
    reading = pyyaml_reading(text)
    assert reading is not None, f"PyYAML refuses what read_plain read: {text!r}"
    data, key_lines, duplicates = reading
    assert repr(plain.data) == repr(data), text
    assert plain.key_lines == key_lines, text
    assert plain.duplicates == duplicates, text


def test_read_plain_gives_what_pyyaml_gives_or_nothing() -> None:
    ANSWERED.clear()
    check_against_pyyaml()
    assert len(ANSWERED) >= 400  # the common shape is generated often enough to be tested


BLOCK_HEADERS = ("|", "|-", "|+", ">", ">-", ">+")
RARE_BLOCK_HEADERS = ("|2", ">1", "|-2", "| # c", ">+ ", "|x", "||")
BLOCK_TEXTS = (
    "Use it when asked.", "a: b # not a comment", "- not an item", "'not quoted'", "x  ", "ü",
    "[1, 2]", "{a: b}", "#hash", "---", "yes", "1.5",
)
QUOTED_ITEMS = ('"a b"', "'it''s'", '""', "''", '"x, y"', "'[z]'")
RARE_FLOW_ITEMS = ("plain", "1", "[x]", '"a\\"b"', "{a: b}", "'unclosed", "")


def mapping_lines(draw: st.DrawFn, column: int, depth: int) -> list[str]:
    """The lines of a mapping whose keys stand at ``column``: text values, nested mappings,
    block scalars, flow and block lists, now and then a line of another shape."""
    lines: list[str] = []
    margin = " " * column
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(EXTRA_LINES)))
            continue
        key = rarely(draw, COMMON_KEYS, KEYS)
        kind = draw(st.sampled_from(("text", "text", "mapping", "block", "flow", "list")))
        if kind == "mapping" and depth < 3:
            lines.append(f"{margin}{key}:")
            step = rarely(draw, (2,), (1, 3, 4))
            lines += mapping_lines(draw, column + step, depth + 1)
        elif kind == "block":
            header = rarely(draw, BLOCK_HEADERS, RARE_BLOCK_HEADERS)
            lines.append(f"{margin}{key}: {header}")
            lines += block_lines(draw, column)
        elif kind == "flow":
            count = draw(st.integers(0, 3))
            items = [rarely(draw, QUOTED_ITEMS, RARE_FLOW_ITEMS) for _ in range(count)]
            separator = rarely(draw, (", ",), (",", " , ", ",  "))
            trail = rarely(draw, ("",), (",", " ", " # c"))
            lines.append(f"{margin}{key}: [{separator.join(items)}{trail}]")
        elif kind == "list" and depth < 3:
            lines.append(f"{margin}{key}:")
            lines += list_lines(draw, column + rarely(draw, (0, 2), (1, 3)), depth + 1)
        else:
            value = rarely(draw, COMMON_VALUES, VALUES)
            lines.append(f"{margin}{key}: {value}" if value else f"{margin}{key}:")
    return lines


def block_lines(draw: st.DrawFn, column: int) -> list[str]:
    """The lines of a block scalar after a key at ``column``: text at its indentation, more
    indented, blank lines, lines of spaces, now and then a first line that is not text."""
    indent = column + rarely(draw, (2,), (1, 0, 4))
    lines = []
    for index in range(draw(st.integers(1, 5))):
        kind = rarely(draw, ("text", "text", "text", "blank"), ("spaces", "deeper", "less"))
        if kind == "blank" and index:
            lines.append("")
        elif kind == "spaces":
            lines.append(" " * draw(st.integers(1, indent + 2)))
        elif kind == "deeper":
            deeper = " " * (indent + draw(st.integers(1, 3)))
            lines.append(deeper + draw(st.sampled_from(BLOCK_TEXTS)))
        elif kind == "less" and indent > 1:
            lines.append(" " * (indent - 1) + draw(st.sampled_from(BLOCK_TEXTS)))
        else:
            lines.append(" " * indent + draw(st.sampled_from(BLOCK_TEXTS)))
    return lines


def list_lines(draw: st.DrawFn, column: int, depth: int) -> list[str]:
    """The lines of a block list whose '-' stand at ``column``: text items and mappings."""
    lines: list[str] = []
    margin = " " * column
    for _ in range(draw(st.integers(1, 3))):
        dash = rarely(draw, ("- ",), ("-  ", "-", "- - ", "-x "))
        if draw(st.booleans()):
            lines.append(f"{margin}{dash}{rarely(draw, COMMON_VALUES, VALUES)}".rstrip())
            continue
        item = mapping_lines(draw, column + len(dash), depth + 1) if depth < 3 else ["x: y"]
        first = item[0].lstrip(" ") if item else ""
        lines.append(f"{margin}{dash}{first}")
        shift = rarely(draw, (0,), (1, -1))
        lines += [(" " * max(shift, 0) + line[max(-shift, 0):]) for line in item[1:]]
    return lines


@st.composite
def structured_front_matter(draw: st.DrawFn) -> str:
    return "\n".join(mapping_lines(draw, 0, 0))


STRUCTURED: list[str] = []


@settings(max_examples=5000, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(structured_front_matter())
def check_structures_against_pyyaml(text: str) -> None:
    assert_read_as_pyyaml_reads(text, STRUCTURED)


def test_block_text_and_lists_are_read_as_pyyaml_reads_them_or_not_at_all() -> None:
    STRUCTURED.clear()
    check_structures_against_pyyaml()
    answered = "\n".join(STRUCTURED)
    assert len(STRUCTURED) >= 500
    # Each shape is among the answered texts, not only the simple ones: block text, a flow
    # list, lists at their key's column and indented, mappings in a list, deeper mappings.
    shapes = (r": \|", r": >-", r": \[", r"\n- ", r"\n  - ", r"\n *- [\w-]+: ", r"\n    [\w-]+: ")
    for shape in shapes:
        assert re.search(shape, answered), shape


def test_the_common_shapes_are_read_without_pyyaml() -> None:
    text = (
        "name: csv-summary\n"
        "description: Summarises CSV files (columns, types). Use when asked about a CSV.\n"
        "license: Apache-2.0\n"
        "# who wrote it\n"
        "metadata:\n"
        "  author: 'O''Brien'\n"
        '  version: "1.0"\n'
        "\n"
        "allowed-tools: Read Write Bash(git:*)\n"
        "name: again\n"
    )
    plain = read_plain(text)
    assert plain is not None
    assert plain.data == {
        "name": "again",
        "description": "Summarises CSV files (columns, types). Use when asked about a CSV.",
        "license": "Apache-2.0",
        "metadata": {"author": "O'Brien", "version": "1.0"},
        "allowed-tools": "Read Write Bash(git:*)",
    }
    assert plain.key_lines == {
        "name": 0, "description": 1, "license": 2, "metadata": 4, "allowed-tools": 8,
    }
    assert plain.duplicates == [("name", 9)]
    assert pyyaml_reading(text) == (plain.data, plain.key_lines, plain.duplicates)


def test_block_text_and_lists_as_public_skills_write_them_are_read_without_pyyaml() -> None:
    text = (
        "name: api\n"
        "description: |-\n"
        "  Reference for the API: ids, pricing.\n"
        "  TRIGGER \u2014 read BEFORE opening the file; don't skip # it\n"
        "\n"
        "    indented: kept\n"
        "metadata:\n"
        '  keywords: ["pKa prediction", \'it\'\'s\']\n'
        "  contributors:\n"
        "    - name: Ada\n"
        "      org: Works, LLC\n"
        "    - plain text\n"
        "tags:\n"
        "- one\n"
        "- 'two'\n"
        "summary: >\n"
        "  folded\n"
        "  lines\n"
    )
    plain = read_plain(text)
    assert plain is not None
    assert plain.data == {
        "name": "api",
        "description": "Reference for the API: ids, pricing.\nTRIGGER \u2014 read BEFORE opening"
        " the file; don't skip # it\n\n  indented: kept",
        "metadata": {
            "keywords": ["pKa prediction", "it's"],
            "contributors": [{"name": "Ada", "org": "Works, LLC"}, "plain text"],
        },
        "tags": ["one", "two"],
        "summary": "folded lines\n",
    }
    assert plain.key_lines == {
        "name": 0, "description": 1, "metadata": 6, "tags": 12, "summary": 15,
    }
    assert pyyaml_reading(text) == (plain.data, plain.key_lines, plain.duplicates)




@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"public skills corpus not found at {CORPUS}")
def test_the_public_corpus_front_matter_is_read_as_pyyaml_reads_it() -> None:
    texts = [
        path.read_text(encoding="utf-8").split("\n---", 1)[0][4:]
        for path in sorted(CORPUS.rglob("SKILL.md"))
    ]
    assert texts
    read = [(text, read_plain(text)) for text in texts]
    for text, plain in read:
        if plain is not None:
            assert (plain.data, plain.key_lines, plain.duplicates) == pyyaml_reading(text)
    assert sum(plain is not None for _text, plain in read) >= 0.9 * len(texts)


def test_the_copy_of_pyyaml_s_implicit_resolvers_is_pyyaml_s_table() -> None:
    # read_plain tells text from numbers, booleans, dates and null with its own copy of the
    # table, so that the common front matter imports no PyYAML: the copy must be the table.
    copied: dict[str | None, list[tuple[str, str, int]]] = {}
    for tag, pattern, flags, firsts in IMPLICIT_RESOLVERS:
        compiled = re.compile(pattern, flags)
        for first in (*firsts, *([""] if tag.endswith(":null") else [])):
            copied.setdefault(first, []).append((tag, compiled.pattern, compiled.flags))
    table = yaml.CSafeLoader.yaml_implicit_resolvers
    assert copied == {
        first: [(tag, regexp.pattern, regexp.flags) for tag, regexp in resolvers]
        for first, resolvers in table.items()
    }


def test_plain_front_matter_is_read_without_importing_pyyaml() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pytest_agent_skills.skill import parse_skill_text\n"
        "parsed = parse_skill_text('---\\nname: x\\nversion: 1.0.2\\nmetadata:\\n"
        "  on-call: no one\\n---\\nBody\\n', Path('SKILL.md'))\n"
        "assert parsed.front_matter is not None and not parsed.problems\n"
        "assert parsed.front_matter.values['metadata'] == {'on-call': 'no one'}\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'yaml'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_characters_sent_to_pyyaml_are_the_class_they_were_named_as() -> None:
    # Every code point, alone after ASCII and after a non-ASCII letter, against the character
    # class the check replaced (a regular expression that took a millisecond to compile).
    import re

    from pytest_agent_skills.plainyaml import _has_unusual

    unusual = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
    differ = [
        hex(point)
        for point in range(0x110000)
        for text in (f"a: b{chr(point)}", f"a: é{chr(point)}")
        if _has_unusual(text) != (unusual.search(text) is not None)
    ]
    assert differ == []
    assert not _has_unusual("name: x\ndescription: y\n") and _has_unusual("a:\tb")
