"""``SKILL.md`` as the reference runtime reads it: its split of the front matter from the
body, its fields as text, and its ``Tools:`` section.

The ``Tools:`` section is read with the reference runtime's grammar, so the
list of declared tools is exactly the one the reference would expose; the
quirks of that grammar (inline comments kept in names, headings that do not
end the section) are reported by validation rules instead of being "fixed"
here, because fixing them would make a skill behave differently under us
than under the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .skill import ParsedSkillFile

#: Prose lines starting with these words end a ``Tools:`` section (reference grammar).
TOOLS_SECTION_END_WORDS = ("Overview", "Examples", "Usage", "Description", "Installation")


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


def find_tools_section(body: str, first_line: int) -> ToolsSection | None:
    """The ``Tools:`` section of ``body`` (whose first line is line ``first_line``).

    The header is the first line whose stripped, lowercased text starts with ``tools:``;
    such a line holds ``s:`` or ``S:``, so only lines holding one are looked at.
    """
    from .bodyscan import occurrences

    for start in sorted(occurrences(body, "s:") + occurrences(body, "S:")):
        line_start = body.rfind("\n", 0, start) + 1
        line_end = body.find("\n", line_start)
        line = body[line_start : line_end if line_end >= 0 else len(body)]
        if line.strip().lower().startswith("tools:"):
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
