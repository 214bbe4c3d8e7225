"""Where a match stands in a file, which decides how much it weighs: code (a script, a shell
block of a Markdown file: what an agent runs), prose (what the model reads as
instructions), a quote (a code block of text or data, inline code, quotation marks: shown,
not meant), a comment (an HTML comment: read by the model, hidden from a reader of the page),
or data (a JSON, YAML or CSV file).  Also the evidence of a match: its line, cut to a
readable length, invisible characters written escaped."""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Literal, NamedTuple

from .severity import Severity
from .sources import SourceFile, line_starts

Region = Literal["code", "prose", "quote", "comment", "data"]

#: Fence languages whose blocks are shown, not run.
_QUOTE_LANGUAGES = frozenset(
    {
        "text",
        "txt",
        "plain",
        "plaintext",
        "markdown",
        "md",
        "output",
        "log",
        "json",
        "jsonc",
        "json5",
        "yaml",
        "yml",
        "toml",
        "ini",
        "csv",
        "xml",
        "html",
        "diff",
        "none",
        "prompt",
        "example",
        "email",
        "http",
    }
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)")
#: The longest evidence shown, in characters (a minified line is cut around the match).
EVIDENCE_CHARS = 200


@functools.cache
def _words_pattern(words: tuple[str, ...], flags: int) -> re.Pattern[str]:
    """The pattern of a tuple of words :meth:`Located.scan` was asked for, made once."""
    return re.compile("|".join(map(re.escape, words)), flags)


class Hit(NamedTuple):
    """A rule's match in a file: the characters it covers, its severity there, the message;
    ``evidence`` when the line is not the right thing to show (decoded hidden text)."""

    rule: str
    severity: Severity
    start: int
    end: int
    message: str
    evidence: str | None = None

    @classmethod
    def at(cls, match: re.Match[str], rule: str, severity: Severity, message: str) -> Hit:
        """The hit of ``rule`` covering ``match``."""
        return cls(rule, severity, match.start(), match.end(), message)


class Located:
    """A file being scanned, with its lines and (for Markdown) the region of each line,
    worked out once and only when a match asks."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.text = source.text

    @functools.cached_property
    def lower(self) -> str:
        return self.text.lower()

    @functools.cached_property
    def starts(self) -> list[int]:
        return line_starts(self.text)

    @functools.cached_property
    def _markdown(self) -> tuple[list[Region], list[int]]:
        """The region and the fenced block of each line of a Markdown file."""
        return _markdown_regions(self.text)

    def mentions(self, words: tuple[str, ...]) -> bool:
        """Whether the text holds one of ``words`` (lowercase), ignoring case: a rule's cheap
        first look, before its patterns run."""
        lower = self.lower
        return any(word in lower for word in words)

    def scan(self, pattern: re.Pattern[str], words: tuple[str, ...]) -> Iterator[re.Match[str]]:
        """The matches of ``pattern`` (a pattern of one line, or one continued on the next)
        on the lines holding one of ``words`` (any case): the pattern runs over those lines
        only, not the whole text (a large file of data has few)."""
        same = len(self.lower) == len(self.text)  # the same offsets: the lowercase text is searched
        haystack = self.lower if same else self.text
        found = _words_pattern(words, 0 if same else re.IGNORECASE)
        text = self.text
        done = -1
        for hit in found.finditer(haystack):
            if hit.start() < done:
                continue  # on a line searched already
            start = text.rfind("\n", 0, hit.start()) + 1
            end = text.find("\n", hit.end())
            end = len(text) if end < 0 else text.find("\n", end + 1)  # and the next line
            end = len(text) if end < 0 else end
            yield from pattern.finditer(text, start, end)
            done = end

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def line_text(self, offset: int) -> str:
        number = self.line(offset)
        start = self.starts[number - 1]
        end = self.starts[number] - 1 if number < len(self.starts) else len(self.text)
        return self.text[start:end]

    def region(self, offset: int) -> Region:
        """The region of ``offset`` (inline code and quotation marks in prose: a quote)."""
        kind = self.source.kind
        if kind != "markdown":
            return "code" if kind == "code" else "data"
        region = self._markdown[0][self.line(offset) - 1]
        if region == "prose" and _quoted_inline(self.line_text(offset), self._column(offset)):
            return "quote"
        return region

    def weigh(self, offset: int, severity: Severity) -> tuple[Severity, str]:
        """``severity`` where the text at ``offset`` is run or read as instructions; medium
        where it is only shown (a code block of text, a data file), with a note saying so."""
        if self.region(offset) in ("quote", "data") and severity in ("critical", "high"):
            return "medium", " (shown in a quote or data, not run from here)"
        return severity, ""

    def block(self, offset: int) -> int:
        """The number of the fenced block ``offset`` is in (-1: none; a file that is not
        Markdown is one block)."""
        if self.source.kind != "markdown":
            return 0
        return self._markdown[1][self.line(offset) - 1]

    def _column(self, offset: int) -> int:
        return offset - self.starts[self.line(offset) - 1]

    def evidence(self, start: int, end: int) -> str:
        """The line of the match (cut around it when long), escaped."""
        line = self.line_text(start)
        column = self._column(start)
        width = min(end, start + EVIDENCE_CHARS) - start
        if len(line) > EVIDENCE_CHARS:
            left = max(0, column - (EVIDENCE_CHARS - width) // 2)
            line = line[left : left + EVIDENCE_CHARS]
        return escaped(line.strip())


def _markdown_regions(text: str) -> tuple[list[Region], list[int]]:
    regions: list[Region] = []
    blocks: list[int] = []
    fence = ""
    fence_region: Region = "code"
    block = -1
    count = 0
    in_comment = False
    for line in text.split("\n"):
        if fence:
            regions.append(fence_region)
            blocks.append(block)
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = ""
            continue
        opened = _FENCE.match(line) if not in_comment else None
        if opened:
            fence = opened.group(1)
            language = opened.group(2).lower()
            fence_region = "quote" if language in _QUOTE_LANGUAGES else "code"
            block = count
            count += 1
            regions.append(fence_region)
            blocks.append(block)
            continue
        if in_comment:
            regions.append("comment")
            in_comment = "-->" not in line
        elif "<!--" in line:
            regions.append("comment")
            in_comment = "-->" not in line.rsplit("<!--", 1)[1]
        else:
            regions.append("prose")
        blocks.append(-1)
    return regions, blocks


_QUOTES = "\"'“‘«„"


def _quoted_inline(line: str, column: int) -> bool:
    """Whether ``column`` of a prose line is inside inline code, or right after a quotation
    mark: text shown, not addressed to the model."""
    before = line[:column]
    if before.count("`") % 2 == 1:
        return True
    stripped = before.rstrip()
    return bool(stripped) and stripped[-1] in _QUOTES


def escaped(text: str) -> str:
    """``text`` with every invisible, format or control character written as an escape
    (``\\u200b``, ``\\U000e0041``), tabs kept."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(character) for character in text)


def _escape(character: str) -> str:
    if character == "\t":
        return character
    category = unicodedata.category(character)
    if category in ("Cf", "Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (
        0xFE00 <= ord(character) <= 0xFE0F
    ):
        code = ord(character)
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return character
