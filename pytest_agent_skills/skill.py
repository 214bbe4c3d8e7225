"""The skill model: one folder holding ``SKILL.md``, parsed with line numbers.

Parsing never throws away information and never guesses silently: every
problem met while reading ``SKILL.md`` (no front matter, an unclosed fence,
YAML that does not parse, duplicate keys, a non-mapping document, bytes that
are not UTF-8, a BOM) becomes a :class:`~pytest_agent_skills.findings.Finding`
with the file and the line, kept in :attr:`Skill.problems`.  YAML values keep
their YAML types (the reference runtime stringifies them; we do not): what the reference
reads, the ``Tools:`` section with its grammar included, is
:mod:`~pytest_agent_skills.skill_reference`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .docpath import kind_of
from .errors import LocatedError
from .filenames import BASE_DIR_PLACEHOLDER, SKILL_FILE
from .files import FileReadError, NotRegularFileError, read_skill_file
from .findings import Finding, Severity
from .listings import FolderListings
from .skill_reference import (
    ReferenceReading,
    ToolsSection,
    find_tools_section,
    reference_reading,
)

if TYPE_CHECKING:
    from .bodyscan import MarkdownText

DOC_SUFFIXES = frozenset({".md", ".txt"})
SCRIPT_SUFFIXES = frozenset(
    {
        ".sh", ".bash", ".zsh", ".fish", ".py", ".pyw", ".js", ".mjs", ".cjs", ".ts", ".rb",
        ".pl", ".php", ".lua", ".r", ".ps1", ".awk", ".tcl", ".groovy", ".kts", ".jl",
    }
)


class SkillNotFoundError(LocatedError):
    """The folder has no ``SKILL.md``."""


class SkillParseError(LocatedError):
    """Raised by :meth:`Skill.require_parsed` when ``SKILL.md`` has parse problems."""


class FrontMatter(NamedTuple):
    """The YAML front matter with the line of every top-level key."""

    values: dict[str, Any]
    key_lines: dict[str, int]
    open_line: int
    close_line: int

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.open_line)


@dataclass(frozen=True)
class ParsedSkillFile:
    """The result of splitting and parsing the text of one ``SKILL.md``: its front matter,
    the body and the line it starts on, the problems met, the number of lines, ``source``
    (the text as read, BOM and line ends untouched, for :func:`reference_reading`) and
    ``has_tools_section`` (False when the reference runtime reads no ``Tools:`` section: an
    unclosed front matter)."""

    front_matter: FrontMatter | None
    body: str
    body_line: int
    problems: tuple[Finding, ...]
    line_count: int
    source: str = ""
    has_tools_section: bool = True

    @cached_property
    def tools_section(self) -> ToolsSection | None:
        """The ``Tools:`` section, read on first use (most callers never ask)."""
        return find_tools_section(self.body, self.body_line) if self.has_tools_section else None


def parse_skill_text(text: str, path: Path, newlines: int | None = None) -> ParsedSkillFile:
    """Parse the text of a ``SKILL.md``; problems are returned, never raised.  ``newlines``:
    the number of ``\n`` in a text without ``\r``, when the caller counted them already (in
    the bytes it decoded: ``bytes.count`` searches with ``memchr``, where a ``str`` holding
    characters beyond Latin-1 is searched a character at a time)."""
    problems: list[Finding] = []
    source = text

    def problem(
        rule: str, line: int | None, message: str, severity: Severity = Severity.ERROR
    ) -> None:
        problems.append(Finding(rule, severity, message, path, line))

    if text.startswith("\ufeff"):
        text = text[1:]
        problem(
            "frontmatter-bom",
            1,
            "SKILL.md starts with a UTF-8 byte order mark; the reference runtime then sees no front"
            " matter at all. Save the file as UTF-8 without BOM.",
            Severity.WARNING,
        )
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        newlines = None
    # Lines are found with string searches, not by splitting: bodies run to thousands of lines.
    if newlines is None:
        newlines = text.count("\n")
    line_count = newlines + (0 if text.endswith("\n") else 1)

    if not text or text.isspace():
        problem(
            "frontmatter-missing",
            1,
            "SKILL.md is empty. Start it with a line '---', the fields 'name:' and 'description:',"
            " and a closing line '---', then the instructions.",
        )
        return ParsedSkillFile(
            None, "", 1, tuple(problems), line_count, source, has_tools_section=False
        )

    first_end = _line_end(text, 0)
    first = text[:first_end]
    if first.rstrip() != "---":
        problem(
            "frontmatter-missing",
            1,
            "SKILL.md does not start with YAML front matter: the first line must be '---'"
            f" (found {first[:40]!r}). Add '---', 'name: ...', 'description: ...', '---'"
            " at the top.",
        )
        return ParsedSkillFile(None, text, 1, tuple(problems), line_count, source)

    if first != "---":
        problem(
            "frontmatter-fence",
            1,
            "the opening '---' has trailing spaces; the reference runtime then ignores the front"
            " matter. Remove the spaces after '---'.",
            Severity.WARNING,
        )

    close = _closing_fence(text, first_end)
    if close is None:
        problem(
            "frontmatter-unclosed",
            1,
            "the front matter opened on line 1 is never closed. Add a line '---' after the last"
            " field (name, description, ...).",
        )
        return ParsedSkillFile(
            None, text, 1, tuple(problems), line_count, source, has_tools_section=False
        )
    close_start, close_end = close
    close_line = text.count("\n", 0, close_start) + 1
    if text[close_start:close_end] != "---":
        problem(
            "frontmatter-fence",
            close_line,
            "the closing '---' has trailing spaces; the reference runtime then looks for a later"
            " '---' and loses part of the body. Remove the spaces after '---'.",
            Severity.WARNING,
        )

    yaml_text = text[first_end + 1 : close_start - 1] if close_start > first_end + 1 else ""
    front_matter = _parse_front_matter(yaml_text, 2, close_line, problem)
    body = text[close_end + 1 :]
    return ParsedSkillFile(front_matter, body, close_line + 1, tuple(problems), line_count, source)


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return end if end >= 0 else len(text)


def _closing_fence(text: str, first_end: int) -> tuple[int, int] | None:
    """(start, end) of the first line after the first whose text, right-stripped, is '---'."""
    search = first_end
    while True:
        newline = text.find("\n---", search)
        if newline < 0:
            return None
        start = newline + 1
        end = _line_end(text, start)
        if text[start:end].rstrip() == "---":
            return start, end
        search = start


def _parse_front_matter(
    yaml_text: str, first_line: int, close_line: int, problem: Callable[[str, int, str], None]
) -> FrontMatter | None:
    """The front matter between the fences; ``problem(rule, line, message)`` records errors."""
    if not yaml_text.strip():
        problem(
            "frontmatter-empty",
            first_line - 1,
            "the front matter is empty. Add at least 'name: <folder name>' and"
            " 'description: <what the skill does and when to use it>'.",
        )
        return FrontMatter({}, {}, first_line - 1, close_line)
    read = _compose(yaml_text, first_line, problem)
    if read is None:
        return None
    data, key_lines, duplicates = read
    for key_text, line in duplicates:
        problem(
            "frontmatter-duplicate-key",
            first_line + line,
            f"the key {key_text!r} appears more than once; YAML keeps only the last one."
            " Remove the duplicate.",
        )
    if not isinstance(data, dict):
        problem(
            "frontmatter-not-mapping",
            first_line,
            f"the front matter must be a YAML mapping of fields, found {kind_of(data, yaml=True)}."
            " Write it as 'name: ...' and 'description: ...' lines.",
        )
        return None
    lines = {key: first_line + line for key, line in key_lines.items()}
    values = {str(key): value for key, value in data.items()}
    return FrontMatter(values, lines, first_line - 1, close_line)


def _compose(
    yaml_text: str, first_line: int, problem: Callable[[str, int, str], None]
) -> tuple[Any, dict[str, int], list[tuple[str, int]]] | None:
    """(data, 0-based line of each top-level key, repeated keys) as PyYAML reads them; None
    after recording why the text is not read."""
    import yaml

    from . import yamlguard

    try:
        return yamlguard.read_with_lines(yaml_text)
    except yamlguard.AliasExpansionError as error:
        problem(
            "frontmatter-yaml",
            first_line + (error.problem_mark.line if error.problem_mark is not None else 0),
            f"the front matter is refused: {error.problem}. Write the values out instead of"
            " repeating aliases.",
        )
        return None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = first_line + mark.line if mark is not None else first_line
        problem(
            "frontmatter-yaml",
            line,
            f"the front matter is not valid YAML: {error.problem or error.context}."
            " Quote values that contain ': ' or start with a special character"
            ' (e.g. description: "Use when: ...").',
        )
        return None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        problem(
            "frontmatter-yaml",
            first_line,
            f"the front matter is not valid YAML: {error}. Fix the YAML between the '---' lines.",
        )
        return None


@dataclass(eq=True)
class Skill:
    """A skill folder and its parsed ``SKILL.md``.

    ``listings``: listings of the skill's folders, each taken on first use; a validation run
    shares one between every skill it loads (the walk that found them listed their folders).
    Skills are equal when their folder, parse and problems are.
    """

    directory: Path
    parsed: ParsedSkillFile
    extra_problems: tuple[Finding, ...] = ()
    listings: FolderListings = field(default_factory=FolderListings, compare=False, repr=False)

    @classmethod
    def load(cls, directory: Path | str, listings: FolderListings | None = None) -> Skill:
        """Read ``<directory>/SKILL.md``; raises :class:`SkillNotFoundError` if absent.
        ``listings``: a run's shared folder listings (new ones when None)."""
        return cls.load_all([directory], listings)[0]

    @classmethod
    def load_all(
        cls, directories: Iterable[Path | str], listings: FolderListings | None = None
    ) -> list[Skill]:
        """:meth:`load` of each folder, in order, sharing ``listings`` (new ones when None):
        every ``SKILL.md`` is read, then every one is parsed, so that each step's code stays
        in the processor's caches over thousands of skills.)"""
        listings = listings or FolderListings()
        read = [cls._read(_as_path(folder)) for folder in directories]
        read.reverse()
        skills = []
        while read:  # each file's bytes dropped once decoded: room for the next text
            found = read.pop()
            skills.append(found if isinstance(found, Skill) else cls._parsed(*found, listings))
        return skills

    @classmethod
    def _read(cls, directory: Path) -> tuple[Path, bytes] | Skill:
        """The bytes of ``<directory>/SKILL.md``, or the skill whose ``SKILL.md`` is not read;
        raises :class:`SkillNotFoundError` if absent."""
        try:
            return directory, read_skill_file(directory, SKILL_FILE)
        except FileNotFoundError:
            raise SkillNotFoundError(
                directory, None, "no SKILL.md in this folder (a skill is a folder holding SKILL.md)"
            ) from None
        except NotRegularFileError as error:
            if error.kind != "a folder":
                return cls._unread(directory, error)
            raise SkillNotFoundError(
                directory / SKILL_FILE, None, "SKILL.md is a directory, not a file"
            ) from None
        except FileReadError as error:
            return cls._unread(directory, error)

    @classmethod
    def _parsed(cls, directory: Path, raw: bytes, listings: FolderListings) -> Skill:
        """The skill of the folder whose ``SKILL.md`` holds ``raw``."""
        skill_file = directory / SKILL_FILE
        extra: list[Finding] = []
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            bad_line = raw[: error.start].count(b"\n") + 1
            extra.append(
                Finding(
                    "skill-md-encoding",
                    Severity.ERROR,
                    f"SKILL.md is not valid UTF-8 (byte {raw[error.start]:#04x} at offset"
                    f" {error.start}). Save the file as UTF-8.",
                    skill_file,
                    bad_line,
                )
            )
            text = raw.decode("utf-8", errors="replace")
        parsed = parse_skill_text(text, skill_file, raw.count(b"\n"))
        skill = cls(directory, parsed, tuple(extra), listings)
        skill.__dict__["skill_file"] = skill_file  # the cached property, already made
        return skill

    @classmethod
    def _unread(cls, directory: Path, error: FileReadError) -> Skill:
        """A skill whose SKILL.md was not read: one finding says why (never what it holds)."""
        finding = Finding(
            "skill-md-unreadable", Severity.ERROR, f"SKILL.md {error.reason}", error.path
        )
        nothing = ParsedSkillFile(
            front_matter=None,
            body="",
            body_line=1,
            problems=(),
            line_count=0,
            has_tools_section=False,
        )
        return cls(directory, nothing, (finding,))

    @cached_property
    def skill_file(self) -> Path:
        """``directory/SKILL.md`` (every finding names it: made once)."""
        return self.directory / SKILL_FILE

    @property
    def front_matter(self) -> FrontMatter | None:
        return self.parsed.front_matter

    @property
    def fields(self) -> dict[str, Any]:
        return self.parsed.front_matter.values if self.parsed.front_matter else {}

    @cached_property
    def reference(self) -> ReferenceReading:
        """This SKILL.md as the reference runtime reads it (what the protocol shows)."""
        return reference_reading(self.parsed)

    @property
    def name(self) -> str:
        """The name the reference runtime gives the skill: its front-matter ``name`` as text
        (``123`` -> ``'123'``), stripped, else the folder name."""
        return self.reference.field("name").strip() or self.directory.name.strip()

    @property
    def description(self) -> str:
        """The reference runtime's description: the front-matter value as text (``yes`` ->
        ``'True'``), stripped."""
        return self.reference.field("description").strip()

    @property
    def body(self) -> str:
        """The body after our front matter (with line numbers from :attr:`body_line`); the
        prompt shows :attr:`runtime_body`."""
        return self.parsed.body

    @property
    def runtime_body(self) -> str:
        """The body as the reference runtime cuts it (the whole text when it sees no front
        matter)."""
        return self.reference.body

    @property
    def body_line(self) -> int:
        return self.parsed.body_line

    @property
    def tools(self) -> list[str]:
        """Declared tool names, exactly as the reference runtime would expose them."""
        return list(self.reference.tools)

    @property
    def problems(self) -> tuple[Finding, ...]:
        """Every problem found while reading and parsing ``SKILL.md``."""
        return self.extra_problems + self.parsed.problems

    def require_parsed(self) -> Skill:
        """Return self, or raise :class:`SkillParseError` for the first parse error."""
        for finding in self.problems:
            if finding.is_error:
                message = f"[{finding.rule}] {finding.message}"
                raise SkillParseError(finding.path, finding.line, message)
        return self

    @cached_property
    def markdown(self) -> MarkdownText:
        """The body read as Markdown (the files it refers to, its directives), shared by
        every rule that asks."""
        from .bodyscan import MarkdownText

        return MarkdownText(self.body, self.body_line)

    @cached_property
    def _files(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return _discover_files(self.directory)

    @property
    def docs(self) -> tuple[str, ...]:
        """Relative POSIX paths of the doc files (``.md``/``.txt`` other than SKILL.md)."""
        return self._files[0]

    @property
    def scripts(self) -> tuple[str, ...]:
        """Relative POSIX paths of files with a script extension."""
        return self._files[1]

    def read_text(self, relative: str) -> str:
        """Text of a file of the skill, with ``__BASE_DIR__`` replaced as the reference does.

        Raises :class:`~pytest_agent_skills.files.FileReadError` for a file that is not read
        (see :func:`~pytest_agent_skills.files.read_skill_file`), ``UnicodeDecodeError`` for
        one that is not UTF-8.
        """
        raw = read_skill_file(self.directory, relative)
        return self.substitute_base_dir(raw.decode("utf-8"))

    def substitute_base_dir(self, text: str, base_dir: Path | str | None = None) -> str:
        if BASE_DIR_PLACEHOLDER not in text:  # most texts: no folder to resolve on disk
            return text
        target = str(base_dir if base_dir is not None else self.directory.resolve())
        return text.replace(BASE_DIR_PLACEHOLDER, target)


def _as_path(folder: Path | str) -> Path:
    return folder if isinstance(folder, Path) else Path(folder)


def _discover_files(directory: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Docs and scripts of a skill folder.

    Unlike the reference we skip hidden folders, nested sub-skills (folders
    with their own SKILL.md) and symlinks that lead outside the skill.
    """
    root = directory.resolve()
    docs: list[str] = []
    scripts: list[str] = []
    for current, dirnames, filenames in os.walk(root):
        current_path = Path(current)
        dirnames[:] = sorted(
            name
            for name in dirnames
            if not name.startswith(".") and not (current_path / name / SKILL_FILE).is_file()
        )
        for filename in filenames:
            if filename.startswith(".") or filename.lower() == "skill.md":
                continue
            file_path = current_path / filename
            if file_path.is_symlink() and not _inside(file_path, root):
                continue
            suffix = os.path.splitext(filename)[1].lower()
            relative = file_path.relative_to(root).as_posix()
            if suffix in DOC_SUFFIXES:
                docs.append(relative)
            elif suffix in SCRIPT_SUFFIXES:
                scripts.append(relative)
    return tuple(sorted(docs)), tuple(sorted(scripts))


def _inside(path: Path, root: Path) -> bool:
    """Whether the symlink ``path`` leads inside ``root``; a symlink loop leads nowhere."""
    try:
        if not path.resolve().is_relative_to(root):
            return False
        # Python 3.13 resolves a loop as far as it goes (older ones raise RuntimeError):
        # following it is what fails.
        path.stat()
    except FileNotFoundError:  # a dangling link inside: still the skill's (its target missing)
        return True
    except (OSError, RuntimeError):
        return False
    return True
