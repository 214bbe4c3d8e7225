"""The script operators on a shell script, line by line (a shell script has no syntax tree
the standard library reads): operators inside ``$(( ))`` and ``[ ]``, numbers, ``head`` and
``tail``, a deleted command, an ``exit 0`` after the prologue, a redirection into a file
left out."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .mutant import Candidate, spliced

_ARITHMETIC = re.compile(r"\$\(\((.*?)\)\)")
_ARITHMETIC_SWAP = {"+": "-", "-": "+", "*": "/", "/": "*"}
_TEST_SWAP = {
    "-lt": "-le", "-le": "-lt", "-gt": "-ge", "-ge": "-gt", "-eq": "-ne", "-ne": "-eq",
    "==": "!=", "!=": "==",
}
_TEST_OPERATOR = re.compile(r"(?<=\s)(-lt|-le|-gt|-ge|-eq|-ne|==|!=)(?=\s)")
_NUMBER = re.compile(r"(?<![\w$.{/-])\d+(?![\w.}/])")
_SWAPPED = re.compile(r"\b(head|tail)\b")
#: A redirection into a file (not a descriptor, not /dev/null), or ``tee`` / ``cp``.
_WRITES = re.compile(r"(?<![<>&0-9])>>?\s*(?!&|/dev/null)\S|\btee\b|\bcp\b")
_KEYWORDS = re.compile(
    r"(then|else|elif|fi|do|done|esac|;;|\{|\}|\(|\)|case\b.*|if\b.*|while\b.*|for\b.*|"
    r"until\b.*|function\b.*|\w+\s*\(\)\s*\{?)\s*$"
)
_PROLOGUE = re.compile(r"(#.*|set\s.*|\s*)$")


def shell_candidates(file: str, text: str) -> Iterator[Candidate]:
    """Every change the script operators make to the shell script ``file``."""
    lines = text.splitlines(keepends=True)

    def with_line(index: int, new: str) -> str:
        return spliced(lines, index, index + 1, [new])

    heredoc_end: str | None = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if heredoc_end is not None:  # text fed to a command, not commands
            heredoc_end = None if stripped == heredoc_end else heredoc_end
            continue
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)", line)
        if heredoc:
            heredoc_end = heredoc.group(1)
        if not stripped or stripped.startswith("#"):
            continue
        number = index + 1
        for match in _ARITHMETIC.finditer(line):
            inner = match.group(1)
            for at, char in enumerate(inner):
                if char in _ARITHMETIC_SWAP:
                    spot = match.start(1) + at
                    new = line[:spot] + _ARITHMETIC_SWAP[char] + line[spot + 1 :]
                    yield Candidate("arithmetic", file, number, with_line(index, new))
        for match in _TEST_OPERATOR.finditer(line):
            new = line[: match.start()] + _TEST_SWAP[match.group(1)] + line[match.end() :]
            yield Candidate("comparison", file, number, with_line(index, new))
        code = line.split(" #", 1)[0]
        for match in _NUMBER.finditer(code):
            value = int(match.group())
            replacement = "0" if value == 1 else str(value + 1)
            new = line[: match.start()] + replacement + line[match.end() :]
            yield Candidate("constant", file, number, with_line(index, new))
        for match in _SWAPPED.finditer(code):
            other = "tail" if match.group() == "head" else "head"
            new = line[: match.start()] + other + line[match.end() :]
            yield Candidate("swapped-call", file, number, with_line(index, new))
        if _KEYWORDS.fullmatch(stripped) or line.rstrip().endswith("\\"):
            continue  # structure, or a command that goes on: deleting it breaks the syntax
        operator = "unwritten-output" if _WRITES.search(code) else "deleted-statement"
        yield Candidate(operator, file, number, spliced(lines, index, index + 1))
    yield from _early_exit(file, lines)


def _early_exit(file: str, lines: list[str]) -> Iterator[Candidate]:
    """``exit 0`` after the shebang, comments and ``set`` lines."""
    at = 0
    while at < len(lines) and _PROLOGUE.fullmatch(lines[at].strip()):
        at += 1
    if at < len(lines):
        changed = spliced(lines, at, at, ["exit 0  # mutant: early exit\n"])
        yield Candidate("early-exit", file, at + 1, changed)
