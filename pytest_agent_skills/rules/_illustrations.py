"""Whether a bare path in a body names an example rather than a file of the skill.

Guides name files one might have or create: "**Example**: `scripts/rotate_pdf.py` for PDF
rotation", "(e.g., `references/finance.md`)", "2. A `references/schema.md` file documenting
the tables would help", "python scripts/plot.py -o assets/chart.png", "`scripts/script_name.py
--help`".  Such a path is an illustration when the file is missing; it is not reported as
``reference-missing``.  What decides is the text around the path:

- a lead-in in the same sentence ("e.g.", "for example", "for instance"), an "Example:" label
  opening it, or a list item under a paragraph that has one and ends with ':';
- a sentence that describes what to create: an indefinite article right before the path ("a
  `scripts/x.py` script"), a verb of making a few words before it ("save the chart as ..."),
  an output option or redirection in a command (``-o``, ``--output``, ``>``);
- a placeholder for a part of the path (``script_name``, ``your_script``, ``xxx``).

A link (``[text](references/x.md)``) is always a reference: it is written to be followed.
"""

from __future__ import annotations

import re

from ..bodyparse import Reference

#: Path parts that stand for any file or folder ("`python scripts/script_name.py --help`").
_PLACEHOLDER = re.compile(
    r"(?:script|file|tool|skill|module|folder|dir|doc|your)[_-]?name|your[_-][\w-]+|my[_-][\w-]+"
    r"|x{3,}|placeholder|foo|bar|baz",
    re.I,
)
#: Words that make what follows them in their sentence an example, wherever they stand.
_LEAD_IN = re.compile(r"\b(?:e\.\s?g\.|for example|for instance)", re.I)
#: An "Example:" label opening a line, a list item or a sentence ("**Examples**: ...",
#: "Example - ..."); not "Run the examples:", which names files the skill has.
_LABEL = re.compile(
    r"[\s>#*_+-]*(?:\d{1,9}[.)]\s+)?[*_]*examples?[*_]*\s*(?::|[-\u2013\u2014]\s)", re.I
)
#: "a" or "an" right before the path, quotes and emphasis between: "a `scripts/x.py` script".
_ARTICLE = re.compile(r"\ban?\s+[`*_\"']*$", re.I)
#: A verb of making a few words before the path ("save the chart as `assets/chart.png`"), none
#: of them a word that makes the path a tool or a source ("generate it with scripts/x.py").
_MAKING = re.compile(
    r"\b(?:create|add|write|save|generate|produce|output|export|store|make)(?:s|d|ed|ing)?\b"
    r"(?:\s+(?![(\[\"'`*_]*(?:see|read|refer|consult|load|open|check|follow|run|use|using"
    r"|with|via|by|from|through)\b)[^\s`,;:]+){0,5}?\s+[`*_\"']*$",
    re.I,
)
#: An output option or a redirection right before the path, in a command.
_OUTPUT = re.compile(r"(?:\s-o|--out(?:put)?(?:[-_]\w+)?|[^\s>][ \t]*>>?)[ \t=]*[\"']?$")
#: Abbreviations whose dot ends no sentence (replaced by as many other characters).
_ABBREVIATION = re.compile(r"\b(?:e\.g\.|i\.e\.|etc\.|vs\.|cf\.)", re.I)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\|")
_LIST_ITEM = re.compile(r"[ \t>]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
#: How far back (in lines) the paragraph introducing a list is looked for.
_LOOK_BACK = 30


def is_illustration(text: str, reference: Reference) -> bool:
    """Whether ``reference`` (found in ``text``) is a bare path that names an example."""
    if reference.kind != "path":
        return False
    parts = reference.target.split("/")[1:]
    if any(_PLACEHOLDER.fullmatch(part.split(".", 1)[0]) for part in parts):
        return True
    offset = reference.offset
    if offset < 0:
        return False
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    if f"]({reference.target}" in line:
        return False  # the path is also a link's destination: the link is a reference
    if _OUTPUT.search(text, line_start, offset):
        return True
    sentence = _sentence_before(text, line_start, offset)
    if _LEAD_IN.search(sentence) or _LABEL.match(sentence):
        return True
    if _ARTICLE.search(sentence) or _MAKING.search(sentence):
        return True
    return _LIST_ITEM.match(line) is not None and _introduced_by_example(text, line_start)


def _paragraph_start(text: str, line_start: int) -> int:
    """The start of the paragraph holding the line at ``line_start``, at most
    :data:`_LOOK_BACK` lines up."""
    start = line_start
    for _ in range(_LOOK_BACK):
        if start == 0:
            break
        previous = text.rfind("\n", 0, start - 1) + 1
        if not text[previous : start - 1].strip():
            break  # a blank line before: the paragraph starts here
        start = previous
    return start


def _sentence_before(text: str, line_start: int, offset: int) -> str:
    """The sentence holding ``offset``, up to it, within its line (a line of code is a command
    of its own; a wrapped sentence rarely splits its lead-in from its path)."""
    line = text[line_start:offset]
    plain = _ABBREVIATION.sub(lambda match: "_" * len(match.group(0)), line)  # same offsets
    ends = [match.end() for match in _SENTENCE_END.finditer(plain)]
    return line[ends[-1] :] if ends else line


def _introduced_by_example(text: str, item_start: int) -> bool:
    """Whether the list holding the item at ``item_start`` follows a paragraph with a lead-in
    that ends with ':' ("Examples:", "Example: when building a PDF skill, you need:")."""
    end = item_start - 1
    for _ in range(_LOOK_BACK):
        if end <= 0:
            break
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if line.strip() and not _LIST_ITEM.match(line) and not line.startswith((" ", "\t")):
            paragraph = text[_paragraph_start(text, start) : end]
            leads = _LEAD_IN.search(paragraph) is not None or _LABEL.match(paragraph) is not None
            return leads and paragraph.rstrip(" *_").endswith(":")
        end = start - 1
    return False
