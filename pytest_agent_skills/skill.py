"""The skill model: one folder holding ``SKILL.md``, parsed with line numbers.

Parsing never throws away information and never guesses silently: every
problem met while reading ``SKILL.md`` (no front matter, an unclosed fence,
YAML that does not parse, duplicate keys, a non-mapping document, bytes that
are not UTF-8, a BOM) becomes a :class:`~pytest_agent_skills.findings.Finding`
with the file and the line, kept in :attr:`Skill.problems`.  YAML values keep
their YAML types (the reference runtime stringifies them; we do not).

The ``Tools:`` section is read with the reference runtime's grammar, so the
list of declared tools is exactly the one the reference would expose; the
quirks of that grammar (inline comments kept in names, headings that do not
end the section) are reported by validation rules instead of being "fixed"
here, because fixing them would make a skill behave differently under us
than under the reference.
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

if TYPE_CHECKING:
    from .bodyscan import MarkdownText

DOC_SUFFIXES = frozenset({".md", ".txt"})
SCRIPT_SUFFIXES = frozenset(
    {
        ".sh", ".bash", ".zsh", ".fish", ".py", ".pyw", ".js", ".mjs", ".cjs", ".ts", ".rb",
        ".pl", ".php", ".lua", ".r", ".ps1", ".awk", ".tcl", ".groovy", ".kts", ".jl",
    }
)
#: Prose lines starting with these words end a ``Tools:`` section (reference grammar).
TOOLS_SECTION_END_WORDS = ("Overview", "Examples", "Usage", "Description", "Installation")



class SkillNotFoundError(LocatedError):
    """The folder has no ``SKILL.md``."""


class SkillParseError(LocatedError):
    """Raised by :meth:`Skill.require_parsed` when ``SKILL.md`` has parse problems."""


class ToolDeclaration(NamedTuple):
    """One ``- name`` bullet of the ``Tools:`` section, as the reference captures it."""

    name: str
    line: int
    #: True when a ``##`` heading or a prose line came between the section
    #: header and this bullet: the reference still captures it, a human
    #: reader usually meant it as a usage step.
    after_break: bool = False


class ToolsSection(NamedTuple):
    """The ``Tools:`` section: its header's line, its bullets and its header as written."""

    line: int
    tools: tuple[ToolDeclaration, ...]
    #: The text of the ``Tools:`` header line, as written.
    header: str

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]


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
    return ParsedSkillFile(
        front_matter, body, close_line + 1, tuple(problems), line_count, source
    )


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


@dataclass(frozen=True)
class ReferenceReading:
    """``SKILL.md`` as the reference runtime reads it (``FsSkillRepository.from_markdown``).

    Its split is stricter than ours: the text must start with exactly ``---\\n`` and the front
    matter ends at the first later ``\\n---\\n``; otherwise (a BOM, a fence with trailing
    spaces, an empty front matter, a closing fence at the end without a newline) there is no
    front matter and the whole text is the body.  Every value is ``str()``-ed (``yes`` ->
    ``'True'``, ``123`` -> ``'123'``, null -> ``''``); YAML that does not parse gives no fields.
    Our parser reads more and reports each such case as a finding; the protocol shows what
    the reference would (name, description, body, ``Tools:``), so a skill behaves the same.
    """

    #: The front matter's data as the reference parses it (mappings of any keys and values).
    values: dict[Any, Any]
    body: str

    @cached_property
    def fields(self) -> dict[str, str]:
        """Every field as the reference runtime keeps it: key and value as text."""
        return _stringified(self.values)

    def field(self, name: str) -> str:
        """The field ``name`` of :attr:`fields` ("" when absent), without making the others
        (the text of a nested mapping costs more than a name)."""
        found = ""
        for key, value in self.values.items():  # the last key of this name wins, as in fields
            if name and str(key).strip() == name:
                found = "" if value is None else str(value)
        return found

    @cached_property
    def tools(self) -> tuple[str, ...]:
        """The ``Tools:`` section of :attr:`body`, read with the reference grammar on first
        use (validation, which asks for names only, never reads it)."""
        section = find_tools_section(self.body, 1)
        return tuple(section.names) if section else ()


def declared_name(text: str) -> str:
    """The front-matter ``name`` of the ``SKILL.md`` text ``text`` as the reference runtime
    reads it, stripped ("" when there is none): what :attr:`Skill.name` gives unless it is
    empty, read without the rest of the skill (collection names a skill it may not check)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
    if end < 0:
        return ""
    from . import yamlguard

    try:
        data = yamlguard.load(text[4:end])
    except Exception:  # the reference swallows every error here: no fields
        return ""
    return ReferenceReading(data if isinstance(data, dict) else {}, "").field("name").strip()


def reference_reading(parsed: ParsedSkillFile) -> ReferenceReading:
    """What the reference runtime reads from the text ``parsed`` came from."""
    ours = parsed.front_matter.values if parsed.front_matter else {}
    if not parsed.source:  # built by hand without its text: our reading is all there is
        return ReferenceReading(ours, parsed.body)
    text = parsed.source
    if "\r" in text:  # the reference reads SKILL.md with universal newlines, as we do
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
    if end < 0:
        return ReferenceReading({}, text)
    # Whether the reference's body (text[end + 5:]) is ours, without copying a long body.
    if len(text) - end - 5 == len(parsed.body) and text.endswith(parsed.body):
        # The same split as ours (the common case): our YAML data is the reference's.
        return ReferenceReading(ours, parsed.body)
    body = text[end + 5 :]
    from . import yamlguard  # PyYAML: only for a text the two splits read differently

    try:
        data = yamlguard.load(text[4:end]) or {}
    except Exception:  # the reference swallows every error here: no fields
        data = {}
    return ReferenceReading(data if isinstance(data, dict) else {}, body)


def _stringified(values: dict[Any, Any]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for key, value in values.items():
        name = str(key).strip()
        if name:
            fields[name] = "" if value is None else str(value)
    return fields


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
            " (e.g. description: \"Use when: ...\").",
        )
        return None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        problem(
            "frontmatter-yaml",
            first_line,
            f"the front matter is not valid YAML: {error}. Fix the YAML between the"
            " '---' lines.",
        )
        return None




def find_tools_section(body: str, first_line: int) -> ToolsSection | None:
    """The ``Tools:`` section of ``body`` (whose first line is line ``first_line``).

    The header is the first line whose stripped, lowercased text starts with ``tools:``;
    such a line holds ``s:`` or ``S:``, so only lines holding one are looked at.
    """
    from .bodyscan import occurrences

    for start in sorted(occurrences(body, "s:") + occurrences(body, "S:")):
        line_start = body.rfind("\n", 0, start) + 1
        if body[line_start : _line_end(body, line_start)].strip().lower().startswith("tools:"):
            lines = body[line_start:].split("\n")
            return parse_tools_section(lines, first_line + body.count("\n", 0, line_start))
    return None


def parse_tools_section(body_lines: list[str], first_line: int) -> ToolsSection | None:
    """Read the ``Tools:`` section with the reference runtime's grammar.

    ``first_line`` is the 1-based line number of ``body_lines[0]`` in SKILL.md.
    """
    start = next(
        (i for i, line in enumerate(body_lines) if line.strip().lower().startswith("tools:")),
        None,
    )
    if start is None:
        return None
    tools: list[ToolDeclaration] = []
    after_break = False
    for index in range(start + 1, len(body_lines)):
        stripped = body_lines[index].strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if stripped.startswith("##"):
                after_break = True
            continue
        if not stripped.startswith("-"):
            if ":" in stripped or stripped.startswith(TOOLS_SECTION_END_WORDS):
                break
            after_break = True
            continue
        name = stripped[1:].strip()
        if name and not name.startswith("#"):
            tools.append(ToolDeclaration(name, first_line + index, after_break))
    return ToolsSection(first_line + start, tuple(tools), body_lines[start])


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
            front_matter=None, body="", body_line=1, problems=(), line_count=0,
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
