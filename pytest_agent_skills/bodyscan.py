"""A skill body (or a doc it links) read as CommonMark: the files it refers to and
the ``<!-- agent-skills: ... -->`` directives it holds.

The answers are the ones a CommonMark parser (markdown-it-py) gives:

- a Markdown link, an image or a reference definition (``[1]: docs/x.md``) refers
  to its destination; a reference link (``[g][1]``) is checked at its definition;
- a bare path such as ``scripts/run.py`` refers to that file in prose, inline code
  and code blocks (commands are instructions), but not inside a fenced Markdown
  example (```` ```markdown ````, ``~~~md``: the text of another document), an HTML
  comment, or a code span that shows link syntax (`` `[text](docs/page.md)` ``);
- link syntax inside code (fenced, indented or inline) or a comment is not a link;
- a footnote (``[^1]: ...``) is not a reference definition.

The parser builds a token for every block and inline span of a body, where the references
are a few plain strings, so a text is first scanned with string searches
(:meth:`MarkdownText.references`).  The scan finds every reference the parser finds, and
possibly more.  For a candidate it would report, :meth:`MarkdownText.verdict` says whether
the parser reads it too, or that only the parser can tell (code, HTML, an escape or a
Markdown example could be hiding it; fences that pair up plainly are followed without it).
For the others, :meth:`MarkdownText.exact_references` asks the parser, which reads the text
only up to the end of the last paragraph in question, and parses inline content only
in the blocks in question.  tests/skill/test_bodyscan.py holds the scan to the parser on
generated Markdown.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from collections.abc import Iterable
from functools import cached_property
from typing import Any, NamedTuple
from urllib.parse import unquote

from .filenames import BASE_DIR_PLACEHOLDER

#: Info-string languages of a fenced block that holds Markdown text (an example, not instructions).
MARKDOWN_LANGUAGES = frozenset({"markdown", "md", "mdx", "gfm", "commonmark"})
DIRECTIVE_PREFIX = "agent-skills:"

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
#: What a relative file path looks like; excludes link-like text such as SMILES '[C:1](=[O:2])'.
_PATH_LIKE = re.compile(r"(?:\.{1,2}/)*[\w~][\w.~ /-]*")
#: A link destination the scan reads exactly as the parser does: no escapes, entities,
#: brackets or parentheses, then an optional quoted title and the closing parenthesis.
_PLAIN_DESTINATION = re.compile(
    r"[ \t]*\n?[ \t]*([^\s()<>\\&]+)(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)"
)
_LOOSE_DESTINATION = re.compile(r"\s*<?([^)\s>]*)")
#: A bare path from the '/' after its first folder: more folders (whose names may hold dots:
#: 'v1.2.3/', 'UiPath.DataService.Activities/'), then a file name with an extension
#: ('scripts/run.py', 'assets/a/b.tar.gz').
_PATH_AFTER_SLASH = re.compile(r"/(?:[\w-][\w.-]*/)*[\w.-]*\w\.[A-Za-z0-9]+(?![\w/])")
_BRACKET_END = re.compile(r"\][(:]")
#: A line that may be a reference definition: label (not a footnote's '^'), ':', destination,
#: then the end of the line or a title.
_DEFINITION = re.compile(
    r"[ \t]{0,3}\[(?!\^)[^\]\n]+\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|[^\s<]\S*)(?=[ \t]*(?:\n|$|[\"'(]))"
)
#: A line that may open an HTML block: '<' after at most 3 spaces (the first line, the others).
_HTML_FIRST_LINE = re.compile(r" {0,3}<")
_HTML_LINE = re.compile(r"\n {0,3}<")
_DIRECTIVE = re.compile(r"<!--\s*agent-skills:.*?-->", re.DOTALL)
_DIRECTIVE_BODY = re.compile(r"agent-skills:[ \t]*(\S*)(.*)", re.DOTALL)
#: Openers of HTML blocks that a blank line does not end (CommonMark kinds 1, 3-5; comments,
#: kind 2, are followed to their end), lowercase.
_LONG_HTML_OPENERS = ("<?", "<pre", "<script", "<style", "<textarea", "<![cdata[")
_PATH_BOUNDARY = "./$~-"
#: What may stand before a fence on its line: indentation, quote and list-item markers.
_CONTAINER_PREFIX = re.compile(r"[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+[ \t>]*)*")

#: A fence with an 'm' or 'M' after it on its line: what a Markdown example's fence has.
_MAYBE_MARKDOWN_FENCE = re.compile(r"```[^\n]*[mM]")
_MAYBE_MARKDOWN_TILDES = re.compile(r"~~~[^\n]*[mM]")

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
    if _SCHEME.match(destination) or destination.startswith(("#", "/", "\\")):
        return None
    target = destination.split("#", 1)[0].split("?", 1)[0]
    if "%" in target:
        target = unquote(target)
    return target if _PATH_LIKE.fullmatch(target) else None


def occurrences(text: str, needle: str) -> list[int]:
    """Offsets of every (non-overlapping) occurrence of ``needle`` in ``text``."""
    found = []
    start = text.find(needle)
    while start >= 0:
        found.append(start)
        start = text.find(needle, start + len(needle))
    return found


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


class MarkdownText:
    """One Markdown text whose first line is line ``first_line`` of its file."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        if BASE_DIR_PLACEHOLDER in text:
            # The runtime replaces the placeholder with the skill folder: what follows it
            # is a path from the skill root. (Offsets move, lines do not.)
            text = text.replace(BASE_DIR_PLACEHOLDER + "/", "")
        self.text = text
        self.first_line = first_line
        self._references: dict[frozenset[str], list[Reference]] = {}
        self._blocks: dict[frozenset[int], _Blocks] = {}
        self._closers: dict[int, int] = {}

    # -- the string scan ---------------------------------------------------------------

    def references(self, folders: frozenset[str]) -> list[Reference]:
        """Every reference candidate, in text order: links, reference definitions, and bare
        paths whose first folder is in ``folders``."""
        if folders not in self._references:
            self._references[folders] = self.numbered(self.candidates(folders))
        return self._references[folders]

    def candidates(self, folders: frozenset[str]) -> list[Reference]:
        """:meth:`references` without their lines (0): a long body has thousands, and most
        callers need the line of a few (see :meth:`numbered`).  Not kept: the rule that
        asks reads them once."""
        found = [*self._links_and_definitions(), *self._paths(folders)]
        found.sort(key=_offset)
        return found

    def numbered(self, references: Iterable[Reference]) -> list[Reference]:
        """``references`` (in text order) with their line numbers, counted in one pass."""
        text = self.text
        line, position = self.first_line, 0
        numbered = []
        for _line, target, kind, offset, certain in references:
            line += text.count("\n", position, offset)
            position = offset
            numbered.append(Reference(line, target, kind, offset, certain))
        return numbered

    @cached_property
    def _brackets(self) -> tuple[list[int], list[int]]:
        """Offsets of every ']('' and of every ']:' (one search for both)."""
        links: list[int] = []
        definitions: list[int] = []
        for match in _BRACKET_END.finditer(self.text):
            (links if match.group(0) == "](" else definitions).append(match.start())
        return links, definitions

    def _links_and_definitions(self) -> Iterable[Reference]:
        text = self.text
        links, definitions = self._brackets
        for start in links:
            line_start = text.rfind("\n", 0, start) + 1
            bracket = text.rfind("[", line_start, start)
            if bracket >= 0 and text.find("]", bracket + 1, start) < 0:
                reference = self._link_at(start + 2)
                if reference is not None:
                    yield reference
        for start in definitions:
            line_start = text.rfind("\n", 0, start) + 1
            definition = _DEFINITION.match(text, line_start)
            if definition is not None and definition.end() > start:
                target = link_target(definition.group(1).strip("<>"))
                if target is not None:
                    # Whether this is a definition depends on the lines around it.
                    yield Reference(0, target, "definition", definition.start(1), certain=False)

    def _link_at(self, position: int) -> Reference | None:
        text = self.text
        plain = _PLAIN_DESTINATION.match(text, position)
        if plain is not None:
            target = link_target(plain.group(1))
            return Reference(0, target, "link", plain.start(1)) if target is not None else None
        loose = _LOOSE_DESTINATION.match(text, position)
        assert loose is not None  # every part of the pattern is optional
        raw = loose.group(1)
        if _SCHEME.match(raw) or raw.startswith(("#", "/")):
            return None  # a URL or an anchor, however the parser reads the rest
        target = link_target(raw)
        marked = any(mark in text[position : loose.end() + 1] for mark in "<\\&")
        if target is None and not marked:
            return None  # e.g. 'f[i](x, y)' in code: no reading of it makes a path
        # Escapes, entities, '<...>' or parentheses: only the parser knows the destination.
        return Reference(0, target or raw, "link", loose.start(1), certain=False)

    def _paths(self, folders: frozenset[str]) -> list[Reference]:
        """Bare paths ``folder/.../name.ext``: at each '/' that ends a folder name (which must
        not continue a word, a path or a variable), the rest of the path from the '/'.  One
        search for '/' serves every folder: a search per folder name costs more, and most
        slashes (in URLs) end no folder name.  (Two paths never overlap: a folder inside a
        path follows a '/', which no path starts after.)"""
        text = self.text
        find = text.find
        slash = find("/", 1)
        if slash < 0 or not folders:
            return []
        lengths_by_end = _lengths_by_end(folders)
        found = []
        match = _PATH_AFTER_SLASH.match
        while slash > 0:
            lengths = lengths_by_end.get(text[slash - 1])
            if lengths is not None:
                start = _folder_start(text, slash, folders, lengths)
                if start >= 0:
                    path = match(text, slash)
                    if path is not None:
                        found.append(Reference(0, text[start : path.end()], "path", start))
            slash = find("/", slash + 1)
        return found

    # -- when the scan is the parser's answer ------------------------------------------

    def verdict(self, reference: Reference) -> bool | None:
        """Whether the parser reads this reference here: True or False when the string scan
        can tell, None when only the parser can (code, HTML, an escape or a Markdown example
        could make it read the place differently)."""
        if reference.offset < 0 or not reference.certain:
            return True if reference.certain else None
        text, offset = self.text, reference.offset
        start = text.rfind("\n\n", 0, offset) + 1
        end = _end(text.find("\n\n", offset), text)  # the paragraph, or more
        if reference.kind == "path":
            if self._in_comment_maybe(offset):
                return None
            link_in_code = text.find("`", start, end) >= 0 and text.find("](", start, end) >= 0
            if not link_in_code and not self._markdown_fence_offsets:
                # Only a Markdown example could hide it, and the text has none: whether it
                # is in code or prose, the answer is the same (no need to pair the fences).
                return True
            fence = self._fence_at(offset)
            if fence is not None:
                inside, example = fence
                if inside:
                    return not example  # commands in code blocks count, Markdown examples not
            elif self._in_markdown_example_maybe(offset):
                return None
            return None if link_in_code else True
        fence = self._fence_at(offset)
        if fence is not None and fence[0]:
            return False  # link syntax in a code block is not a link
        prefix = text[text.rfind("\n", 0, offset) + 1 : offset]
        unsure = (
            (fence is None and self._before(offset, self._fence_offsets))
            or self._in_comment_maybe(offset)
            or self._before(offset, self._long_html_offsets)
            or any(text.find(mark, start, end) >= 0 for mark in ("`", "<", "\\", "&"))
            # Indented code (also right after a list marker), or a quote's own indentation.
            or any(mark in prefix for mark in ("    ", "\t", ">"))
        )
        return None if unsure else True

    def _fence_at(self, offset: int) -> tuple[bool, bool] | None:
        """(inside a fenced block, the block is a Markdown example) at ``offset``, when every
        fence line before it starts a line (no list item, quote or indentation around it) and
        no HTML block or reference definition could hide one: the fences then pair up in
        order, as the parser pairs them.  None when that does not hold."""
        blocks, container_fence, html_line, definition = self._plain_fences
        text = self.text
        line_start = text.rfind("\n", 0, offset) + 1
        line_end = _end(text.find("\n", offset), text)
        if container_fence < line_end or html_line < line_start or definition < offset:
            return None
        index = bisect.bisect_right(blocks, (line_start, len(text) + 1)) - 1
        if index >= 0 and line_start <= blocks[index][1]:
            return True, blocks[index][2]
        return False, False

    @cached_property
    def _plain_fences(self) -> tuple[list[tuple[int, int, bool]], int, int, int]:
        """The fenced blocks as fences starting their lines pair up: (first line's start, last
        line's start, Markdown example); and where that reading stops holding: the first fence
        in a container or indented, the first line that may open an HTML block, the first
        reference definition."""
        text = self.text
        blocks: list[tuple[int, int, bool]] = []
        container_fence = len(text)
        open_fence: tuple[str, int, bool, int] | None = None
        for fence in self._fence_offsets:
            start = fence
            if fence and text[fence - 1] != "\n":
                start = text.rfind("\n", 0, fence) + 1
                if _CONTAINER_PREFIX.fullmatch(text, start, fence):
                    container_fence = start  # a fence in a list item or a quote, or indented
                    break
                continue  # '```' inside a line: no fence
            char = text[fence]
            end = _end(text.find("\n", fence), text)
            rest = text[fence:end].lstrip(char)
            length = end - fence - len(rest)
            if open_fence is None:
                if char == "`" and "`" in rest:  # not a fence: an inline code span
                    container_fence = start
                    break
                open_fence = (char, length, is_markdown_info(rest), start)
            elif char == open_fence[0] and length >= open_fence[1] and not rest.strip(" \t"):
                blocks.append((open_fence[3], start, open_fence[2]))
                open_fence = None
        if open_fence is not None:  # unclosed, or closed only past where the reading holds
            blocks.append((open_fence[3], len(text), open_fence[2]))
        definitions = self._brackets[1]
        first_definition = definitions[0] if definitions else len(text)
        return blocks, container_fence, _html_line(text), first_definition

    @staticmethod
    def _before(offset: int, offsets: tuple[int, ...]) -> bool:
        return bool(offsets) and offsets[0] < offset

    def _in_comment_maybe(self, offset: int) -> bool:
        """Whether an HTML comment may hold ``offset``: the last '<!--' before it is not closed
        before its line (a comment block runs to the end of the line holding '-->')."""
        starts, ends = self._comments
        index = bisect.bisect_left(starts, offset) - 1
        return index >= 0 and ends[index] >= self.text.rfind("\n", 0, offset) + 1

    @cached_property
    def _comments(self) -> tuple[list[int], list[int]]:
        """Offsets of every '<!--' and of the first '-->' after each (``len(text)``: none)."""
        text = self.text
        starts = occurrences(text, "<!--")
        return starts, [_end(text.find("-->", start + 2), text) for start in starts]

    def _in_markdown_example_maybe(self, offset: int) -> bool:
        """Whether a Markdown example may hold ``offset``: some Markdown fence before it has no
        closing-fence line (same character, at least as long, indented at most 3 spaces,
        nothing after it) before ``offset``'s line.  Such a line closes the example, or its
        container (list item, quote) ended before it and closed it: either way, not open."""
        line_start = self.text.rfind("\n", 0, offset) + 1
        return any(
            opener < offset and self._closer_after(opener) >= line_start
            for opener in self._markdown_fence_offsets
        )

    def _closer_after(self, opener: int) -> int:
        """The offset of the first line after the fence at ``opener`` that can close it."""
        if opener not in self._closers:
            text = self.text
            char = text[opener]
            length = len(text) - len(text[opener:].lstrip(char)) - opener
            found = len(text)
            for fence in self._fence_offsets:
                if fence <= opener or text[fence] != char:
                    continue
                line_start = text.rfind("\n", 0, fence) + 1
                line_end = _end(text.find("\n", fence), text)
                run = text[fence:line_end]
                if (
                    fence - line_start <= 3
                    and not text[line_start:fence].strip(" ")
                    and len(run) - len(run.lstrip(char)) >= length
                    and not run.lstrip(char).strip(" \t")
                ):
                    found = line_start
                    break
            self._closers[opener] = found
        return self._closers[opener]

    @cached_property
    def _fence_offsets(self) -> tuple[int, ...]:
        text = self.text
        # Most texts have no '~' at all: one search for a character rules them out.
        tildes = occurrences(text, "~~~") if "~" in text else []
        return tuple(sorted(occurrences(text, "```") + tildes))

    @cached_property
    def _markdown_fence_offsets(self) -> tuple[int, ...]:
        text = self.text
        if not _MAYBE_MARKDOWN_FENCE.search(text) and (
            "~" not in text or not _MAYBE_MARKDOWN_TILDES.search(text)
        ):
            return ()  # no fence line with an 'm' (every Markdown info has one): one search
        return tuple(
            offset
            for offset in self._fence_offsets
            if is_markdown_info(text[offset : _end(text.find("\n", offset), text)].lstrip("`~"))
        )

    @cached_property
    def _long_html_offsets(self) -> tuple[int, ...]:
        lowered = self.text.lower()
        found = [i for i in map(lowered.find, _LONG_HTML_OPENERS) if i >= 0]
        declaration = re.search(r"<![A-Za-z]", self.text)  # <!DOCTYPE ...>
        if declaration:
            found.append(declaration.start())
        return tuple(sorted(found))

    # -- the parser's answer -----------------------------------------------------------

    def exact_references(
        self, folders: frozenset[str], needed: Iterable[Reference]
    ) -> list[Reference]:
        """The references as the parser reads them wherever it can differ from the string
        scan on a ``needed`` reference; elsewhere the scan's (in line order; a link and the
        bare path in it are both there, as in :meth:`references`)."""
        blocks = self._parse(reference.line for reference in needed)
        found = [*blocks.references]
        for reference in self.references(folders):
            index = reference.line - self.first_line
            if index > blocks.cut:
                found.append(reference)
                continue
            kind, parsed = blocks.kind_at(index)
            if reference.kind == "definition" or kind == QUOTED:
                continue  # the parser's definitions are in the list already
            if reference.kind == "link" and (parsed or kind in (CODE, DEFINITION)):
                continue  # no link in code; the parser's links of this block are in the list
            if reference.kind == "path" and blocks.hides(
                index, reference.offset - self.text.rfind("\n", 0, reference.offset) - 1,
                reference.target,
            ):
                continue
            found.append(reference)
        found.sort(key=lambda reference: reference.line)
        return found

    def directives(self) -> list[Directive]:
        """The ``agent-skills:`` comments of the text, as the parser sees HTML comments."""
        return list(self._directives)

    @cached_property
    def _directives(self) -> tuple[Directive, ...]:
        scanned = self._scanned_directives()
        needed = [directive for directive in scanned if not directive.certain]
        if not needed:
            return tuple(scanned)
        blocks = self._parse(directive.line for directive in needed)
        beyond = [d for d in scanned if d.line - self.first_line > blocks.cut]
        return (*blocks.directives, *beyond)

    def _scanned_directives(self) -> list[Directive]:
        if DIRECTIVE_PREFIX not in self.text:
            return []
        text = self.text
        found = []
        line, position = self.first_line, 0
        for match in _DIRECTIVE.finditer(text):
            line += text.count("\n", position, match.start())
            position = match.start()
            found.append(_directive(match.group(0), line, self._comment_is_settled(match)))
        return found

    def _comment_is_settled(self, match: re.Match[str]) -> bool:
        """A comment alone on its line, with nothing before it that could make it code."""
        text = self.text
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = _end(text.find("\n", match.end()), text)
        return (
            not text[line_start : match.start()].strip(" ")
            and match.start() - line_start < 4
            and not text[match.end() : line_end].strip()
            and not self._before(match.start(), self._fence_offsets)
            and not self._before(match.start(), self._long_html_offsets)
            and not self._in_comment_maybe(match.start())
        )

    def _parse(self, lines: Iterable[int]) -> _Blocks:
        needed = frozenset(line - self.first_line for line in lines)
        if needed not in self._blocks:
            self._blocks[needed] = _parse(self.text, self.first_line, needed)
        return self._blocks[needed]


_offset = operator.attrgetter("offset")


def _html_line(text: str) -> int:
    """The start of the first line that may open an HTML block ('<' after at most 3 spaces),
    or ``len(text)``."""
    if _HTML_FIRST_LINE.match(text):
        return 0
    found = _HTML_LINE.search(text)
    return found.start() + 1 if found is not None else len(text)


def _end(index: int, text: str) -> int:
    return index if index >= 0 else len(text)


@functools.lru_cache(maxsize=64)
def _lengths_by_end(folders: frozenset[str]) -> dict[str, tuple[int, ...]]:
    """The lengths of the names of ``folders`` ending in each letter (skills mostly share a few
    sets of folders: made once for each)."""
    lengths: dict[str, set[int]] = {}
    for folder in folders:
        lengths.setdefault(folder[-1], set()).add(len(folder))
    return {end: tuple(sorted(found)) for end, found in lengths.items()}


def _folder_start(
    text: str, slash: int, folders: frozenset[str], lengths: tuple[int, ...]
) -> int:
    """Where the name of one of ``folders`` (of ``lengths``) ending at ``slash`` starts, when
    it does not continue a word, a path or a variable ($dir/...); else -1.  (At most one
    can: a longer name would hold the character before a shorter one.)"""
    for length in lengths:
        start = slash - length
        if start >= 0 and text[start:slash] in folders:
            before = text[start - 1] if start else " "
            if not (before.isalnum() or before == "_" or before in _PATH_BOUNDARY):
                return start
    return -1


def one_per_line(references: Iterable[Reference]) -> list[Reference]:
    """One reference per target and line (a link and the bare path in it are one)."""
    seen: set[tuple[int, str]] = set()
    unique = []
    for reference in references:
        if (reference.line, reference.target) not in seen:
            seen.add((reference.line, reference.target))
            unique.append(reference)
    return unique


def _directive(comment: str, line: int, certain: bool) -> Directive:
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


class _Blocks:
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


def _parse(text: str, first_line: int, needed: frozenset[int]) -> _Blocks:
    """Read ``text`` up to the end of the paragraph holding its last ``needed`` line (block
    structure above a line never depends on what follows its paragraph), with inline
    content parsed only in blocks holding a ``needed`` line."""
    lines = text.split("\n")
    last = max(needed, default=len(lines) - 1)
    cut = next((k for k in range(last + 1, len(lines)) if not lines[k].strip()), len(lines))
    md = _parser()
    env: dict[str, Any] = {}
    tokens = md.parse("\n".join(lines[:cut]), env)
    blocks = _Blocks(cut - 1, first_line)
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
    token: Any, children: list[tuple[Any, int]], lines: list[str], blocks: _Blocks
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
        _directive(match.group(0), line + comment[: match.start()].count("\n"), True)
        for match in _DIRECTIVE.finditer(comment)
    ]
