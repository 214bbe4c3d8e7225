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
For the others, :meth:`MarkdownText.exact_references` asks the parser
(:mod:`~pytest_agent_skills.bodyparse`), which reads the text
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

from . import bodyparse
from .bodyparse import (
    CODE,
    DEFINITION,
    DIRECTIVE,
    QUOTED,
    SCHEME,
    Directive,
    ParsedText,
    Reference,
    directive_of,
    is_markdown_info,
    link_target,
)
from .filenames import BASE_DIR_PLACEHOLDER

DIRECTIVE_PREFIX = "agent-skills:"

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
#: Openers of HTML blocks that a blank line does not end (CommonMark kinds 1, 3-5; comments,
#: kind 2, are followed to their end), lowercase.
_LONG_HTML_OPENERS = ("<?", "<pre", "<script", "<style", "<textarea", "<![cdata[")
_PATH_BOUNDARY = "./$~-"
#: What may stand before a fence on its line: indentation, quote and list-item markers.
_CONTAINER_PREFIX = re.compile(r"[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+[ \t>]*)*")

#: A fence with an 'm' or 'M' after it on its line: what a Markdown example's fence has.
_MAYBE_MARKDOWN_FENCE = re.compile(r"```[^\n]*[mM]")
_MAYBE_MARKDOWN_TILDES = re.compile(r"~~~[^\n]*[mM]")


def occurrences(text: str, needle: str) -> list[int]:
    """Offsets of every (non-overlapping) occurrence of ``needle`` in ``text``."""
    found = []
    start = text.find(needle)
    while start >= 0:
        found.append(start)
        start = text.find(needle, start + len(needle))
    return found


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
        self._blocks: dict[frozenset[int], ParsedText] = {}
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
        if SCHEME.match(raw) or raw.startswith(("#", "/")):
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
                index,
                reference.offset - self.text.rfind("\n", 0, reference.offset) - 1,
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
        for match in DIRECTIVE.finditer(text):
            line += text.count("\n", position, match.start())
            position = match.start()
            found.append(directive_of(match.group(0), line, self._comment_is_settled(match)))
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

    def _parse(self, lines: Iterable[int]) -> ParsedText:
        needed = frozenset(line - self.first_line for line in lines)
        if needed not in self._blocks:
            self._blocks[needed] = bodyparse.parse_text(self.text, self.first_line, needed)
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


def _folder_start(text: str, slash: int, folders: frozenset[str], lengths: tuple[int, ...]) -> int:
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
