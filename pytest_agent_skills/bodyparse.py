"""A Markdown text as the CommonMark parser (markdown-it-py) reads it: its blocks, and in
the blocks in question its links, reference definitions, ``<!-- agent-skills: ... -->``
directives and the spans (inline comments, code spans showing link syntax) that hide a bare
path.  :mod:`pytest_agent_skills.bodyscan` finds the same with string searches, and asks
this module only where its scan cannot tell (:func:`parse_text`).
"""

from __future__ import annotations

import bisect
import re
from typing import Any, NamedTuple
from urllib.parse import unquote

#: Info-string languages of a fenced block that holds Markdown text (an example, not instructions).
MARKDOWN_LANGUAGES = frozenset({"markdown", "md", "mdx", "gfm", "commonmark"})

SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
#: What a relative file path looks like; excludes link-like text such as SMILES '[C:1](=[O:2])'.
_PATH_LIKE = re.compile(r"(?:\.{1,2}/)*[\w~][\w.~ /-]*")

DIRECTIVE = re.compile(r"<!--\s*agent-skills:.*?-->", re.DOTALL)
_DIRECTIVE_BODY = re.compile(r"agent-skills:[ \t]*(\S*)(.*)", re.DOTALL)

#: Kinds of block, as far as references go.
QUOTED = "quoted"  # a Markdown example or an HTML comment: refers to nothing
CODE = "code"  # code or raw HTML: bare paths count, link syntax does not
INLINE = "inline"  # prose: links and bare paths count
DEFINITION = "definition"


def is_markdown_info(info: str) -> bool:
    """Whether a fence info string names Markdown (``md``, ``markdown``, ``{.md}``...)."""
    if "m" not in info and "M" not in info:
        return False  # every name has an 'm', and only 'm' and 'M' lowercase to one
    words = info.strip().lstrip("{").lstrip(".").split(None, 1)
    return bool(words) and words[0].rstrip("}").lower() in MARKDOWN_LANGUAGES


def link_target(destination: str) -> str | None:
    """The relative path a link destination points to; None for URLs, anchors and absolutes."""
    if SCHEME.match(destination) or destination.startswith(("#", "/", "\\")):
        return None
    target = destination.split("#", 1)[0].split("?", 1)[0]
    if "%" in target:
        target = unquote(target)
    return target if _PATH_LIKE.fullmatch(target) else None


class Reference(NamedTuple):
    """A file a text refers to: ``kind`` is ``link`` (links and images), ``definition``
    (``[label]: path``) or ``path`` (a bare path).  (A named tuple: a long body has
    thousands, and a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``.)"""

    line: int
    target: str
    kind: str
    #: Offset in the scanned text; -1 for references read by the parser.
    offset: int = -1
    #: False when the string scan could not read the destination as the parser would.
    certain: bool = True


class Directive(NamedTuple):
    """An ``<!-- agent-skills: ACTION RULE, ... -->`` comment.  (A named tuple, as
    :class:`Reference`: the class is made at import, where a dataclass would generate and
    compile its methods.)"""

    #: The line of ``agent-skills:`` (where a problem with the directive is reported).
    line: int
    action: str
    rules: tuple[str, ...]
    #: The line after the comment: what ``ignore-next-line`` applies to.
    next_line: int
    #: False when the string scan cannot tell whether the parser sees an HTML comment here.
    certain: bool = True


def directive_of(comment: str, line: int, certain: bool) -> Directive:
    """The directive of ``comment`` (``<!--...-->``), which starts on ``line``."""
    inner = comment[4:-3]
    match = _DIRECTIVE_BODY.search(inner)
    assert match is not None
    rules = tuple(rule for rule in re.split(r"[\s,]+", match.group(2)) if rule)
    return Directive(
        line + inner[: match.start()].count("\n"),
        match.group(1),
        rules,
        line + comment.count("\n") + 1,
        certain,
    )


class ParsedText:
    """What the parser read of a text's first lines (0-based lines of the text)."""

    def __init__(self, cut: int, first_line: int) -> None:
        #: The last line read: the parser's answers hold up to it.
        self.cut = cut
        #: The line number in the file of the text's first line.
        self.first_line = first_line
        #: (first line, end line, kind, inline content parsed) of each leaf block, in order.
        self.spans: list[tuple[int, int, str, bool]] = []
        #: Links (of the blocks whose inline content was parsed) and definitions, 1-based
        #: lines.
        self.references: list[Reference] = []
        #: (first line, last line, text, first column, end column) of inline comments and of
        #: code spans showing link syntax: a bare path there is not a reference.  The span
        #: starts at the first column of its first line and ends before the end column of its
        #: last (columns of the text's lines).
        self.hidden: list[tuple[int, int, str, int, float]] = []
        self.directives: list[Directive] = []

    def kind_at(self, index: int) -> tuple[str, bool]:
        position = bisect.bisect_right(self.spans, (index, float("inf"))) - 1
        if position >= 0:
            first, end, kind, parsed = self.spans[position]
            if first <= index < end:
                return kind, parsed
        return INLINE, False

    def hides(self, index: int, column: int, target: str) -> bool:
        """Whether the bare path ``target`` at ``column`` of line ``index`` is in a span."""
        return any(
            first <= index <= last
            and target in text
            and (index > first or column >= start)
            and (index < last or column < stop)
            for first, last, text, start, stop in self.hidden
        )

    def add_link(self, lines: list[str], href: str, line: int, end: int) -> None:
        target = link_target(href)
        if target is not None:
            at = _line_of(lines, target, line, end) + self.first_line
            self.references.append(Reference(at, target, "link"))


_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        from markdown_it import MarkdownIt  # imported on the first parse only

        # Blocks only: the inline content of the blocks a check needs is read by
        # _inline_tokens, not that of every block.  (Nor normalized: offsets stay the text's.)
        _PARSER = MarkdownIt("commonmark", {"inline_definitions": True}).disable(
            ["normalize", "inline", "text_join"]
        )
    return _PARSER


class Block(NamedTuple):
    """A block of a Markdown text as CommonMark reads it: the opening token's type
    (``paragraph_open``, ``list_item_open``, ``fence``...), its nesting level, and its lines
    (``start`` to ``end``, the line after it; counted from 0)."""

    type: str
    level: int
    start: int
    end: int


def blocks(text: str) -> list[Block]:
    """Every block of ``text`` with its lines, in order (inline content not read): the
    structure of a body for a reader that changes steps and paragraphs."""
    return [
        Block(token.type, token.level, token.map[0], token.map[1])
        for token in _parser().parse(text)
        if token.map is not None and not token.type.endswith("_close")
    ]


def parse_text(text: str, first_line: int, needed: frozenset[int]) -> ParsedText:
    """Read ``text`` up to the end of the paragraph holding its last ``needed`` line (block
    structure above a line never depends on what follows its paragraph), with inline
    content parsed only in blocks holding a ``needed`` line."""
    lines = text.split("\n")
    last = max(needed, default=len(lines) - 1)
    cut = next((k for k in range(last + 1, len(lines)) if not lines[k].strip()), len(lines))
    md = _parser()
    env: dict[str, Any] = {}
    tokens = md.parse("\n".join(lines[:cut]), env)
    blocks = ParsedText(cut - 1, first_line)
    for token in tokens:
        if token.map is None:
            continue
        first, end = token.map
        kind = token.type
        if kind == "fence":
            example = is_markdown_info(token.info)
            blocks.spans.append((first, end, QUOTED if example else CODE, False))
        elif kind == "code_block":
            blocks.spans.append((first, end, CODE, False))
        elif kind == "html_block":
            comment = token.content.lstrip().startswith("<!--")
            blocks.spans.append((first, end, QUOTED if comment else CODE, False))
            if comment:
                blocks.directives.extend(_comment_directives(token.content, first + first_line))
        elif kind == "definition":
            blocks.spans.append((first, end, DEFINITION, False))
            target = link_target(token.meta["url"])
            if target is not None and not token.meta["label"].startswith("^"):
                line = _line_of(lines, target, first, end) + first_line
                blocks.references.append(Reference(line, target, "definition"))
        elif kind == "inline":
            parsed = any(first <= index < end for index in needed)
            blocks.spans.append((first, end, INLINE, parsed))
            if parsed:
                _read_inline(token, _inline_tokens(md, token.content, env), lines, blocks)
    # A reference link ('[g][1]') leads to its definition, which is reported instead: the
    # path is written there.
    defined = {ref.target for ref in blocks.references if ref.kind == "definition"}
    blocks.references = [
        ref for ref in blocks.references if ref.kind == "definition" or ref.target not in defined
    ]
    return blocks


_STATE_CLASS: Any = None


def _inline_tokens(md: Any, content: str, env: dict[str, Any]) -> list[tuple[Any, int]]:
    """The inline tokens of ``content``, each with the offset in ``content`` where the
    parser was when it made the token (its start; for a link's end, the ']').

    markdown-it-py gives inline tokens no source positions (``Token.map`` is a block's), so
    this runs the inline parser on a state that notes the position of each token it makes:
    markdown-it-py's inline machinery, whose versions pyproject.toml bounds.
    """
    global _STATE_CLASS
    if _STATE_CLASS is None:
        from markdown_it.rules_inline import StateInline

        class PositionedState(StateInline):
            starts: list[tuple[Any, int]]

            def push(self, ttype: str, tag: str, nesting: Any) -> Any:
                token = super().push(ttype, tag, nesting)
                self.starts.append((token, self.pos))
                return token

        _STATE_CLASS = PositionedState
    tokens: list[Any] = []
    state = _STATE_CLASS(content, md, env, tokens)
    state.starts = []
    md.inline.tokenize(state)
    for rule in md.inline.ruler2.getRules(""):
        rule(state)
    starts: list[tuple[Any, int]] = state.starts
    return starts


def _read_inline(
    token: Any, children: list[tuple[Any, int]], lines: list[str], blocks: ParsedText
) -> None:
    """Links, hidden spans and directives of one inline block (whose content keeps the
    block's line breaks: offsets give lines)."""
    first, end = token.map
    content = token.content
    opened: list[str] = []
    for child, offset in children:
        kind = child.type
        line = first + content.count("\n", 0, offset)
        if kind == "link_open":
            opened.append(str(child.attrs.get("href", "")))
        elif kind == "link_close" and opened:
            # The destination follows the link text: its line is where the text ends.
            blocks.add_link(lines, opened.pop(), line, end)
        elif kind == "image":
            blocks.add_link(lines, str(child.attrs.get("src", "")), line, end)
        elif kind == "html_inline" and child.content.startswith("<!--"):
            stop = offset + len(child.content)
            blocks.hidden.append(_hidden(lines, first, content, offset, stop, child.content))
            at = line + blocks.first_line
            blocks.directives.extend(_comment_directives(child.content, at))
        elif kind == "code_inline" and "](" in child.content:
            length = len(child.markup)
            stop = _code_span_closer(content, offset + length, length) + length
            blocks.hidden.append(_hidden(lines, first, content, offset, stop, child.content))


def _hidden(
    lines: list[str], first: int, content: str, start: int, stop: int, text: str
) -> tuple[int, int, str, int, float]:
    """The hidden span of ``content[start:stop]`` (``content``: an inline block's text, from
    line ``first``), in lines and columns of ``lines``; whole lines where the block's line
    is not its text line with a prefix ('> ', a list marker, indentation) taken off."""
    start_line = first + content.count("\n", 0, start)
    stop_line = first + content.count("\n", 0, stop)
    start_column = _column(lines, start_line, content, start)
    stop_column = _column(lines, stop_line, content, stop)
    return (
        start_line,
        stop_line,
        text,
        0 if start_column is None else start_column,
        float("inf") if stop_column is None else stop_column,
    )


def _column(lines: list[str], index: int, content: str, offset: int) -> int | None:
    """The column in ``lines[index]`` of ``content[offset]``, when the block's line there is
    the end of the text's line (the last one may have lost trailing blanks)."""
    begin = content.rfind("\n", 0, offset) + 1
    end = content.find("\n", offset)
    block_line = content[begin : len(content) if end < 0 else end]
    line = lines[index] if index < len(lines) else ""
    for shown in (line, line.rstrip()):
        if shown.endswith(block_line):
            return len(shown) - len(block_line) + offset - begin
    return None


def _code_span_closer(content: str, position: int, length: int) -> int:
    """Where the code span whose opening run of ``length`` backticks ends at ``position``
    closes: the next run of exactly as many backticks (as markdown-it's backtick rule)."""
    while True:
        start = content.find("`", position)
        if start < 0:  # the parser found a closer: never met
            return len(content)
        position = start + 1
        while position < len(content) and content[position] == "`":
            position += 1
        if position - start == length:
            return start


def _line_of(lines: list[str], target: str, line: int, end: int) -> int:
    """The first line from ``line`` (before ``end``) that shows ``target`` (a destination may
    follow its link text on the next line); ``line`` when none does (escapes, entities)."""
    for index in range(line, min(end, len(lines))):
        if target in lines[index] or target in unquote(lines[index]):
            return index
    return line


def _comment_directives(comment: str, line: int) -> list[Directive]:
    """The directives of the HTML comment(s) in ``comment``, which starts on ``line``."""
    return [
        directive_of(match.group(0), line + comment[: match.start()].count("\n"), True)
        for match in DIRECTIVE.finditer(comment)
    ]
