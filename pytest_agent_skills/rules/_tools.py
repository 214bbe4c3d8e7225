"""``Tools:`` section rules.

The section is read with the reference runtime's grammar (see skill_reference.py), so
each finding here describes something the reference really does with the
text - e.g. ``- a  # note`` declares a tool literally named ``a  # note``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..skill import Skill
from ..skill_reference import ToolDeclaration
from ._base import Hit
from ._options import ValidationOptions

#: What chat-completions APIs accept as a function name, starting with a letter or '_'.
TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_HEADER_TEXT = re.compile(r"(?i)^\s*tools:\s*(\S.*)$")


def check_tools(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    section = skill.parsed.tools_section
    if section is None:
        return
    extra = _HEADER_TEXT.match(section.header)
    if extra:
        yield Hit(
            "tools-header-text",
            section.line,
            f"text after 'Tools:' ({extra.group(1)[:40]!r}) is ignored by the reference runtime;"
            " declare each tool on its own '- name' line below the header.",
        )
    if not section.tools:
        yield Hit(
            "tools-empty",
            section.line,
            "the Tools: section declares no tool, so the reference exposes none. Add '- tool_name'"
            " lines below it, or remove the header.",
        )
    seen: dict[str, int] = {}
    for tool in section.tools:
        is_tool_name = TOOL_NAME.fullmatch(tool.name) is not None
        if not is_tool_name:
            yield Hit("tools-not-identifier", tool.line, _not_identifier(tool))
        elif tool.after_break:
            yield Hit(
                "tools-after-break",
                tool.line,
                f"the bullet '- {tool.name}' comes after a heading or prose line, yet the reference"
                " still reads it as a tool. Keep all tools together right under 'Tools:', and end"
                " the section with a line containing ':' (e.g. 'Usage:') before other bullets.",
            )
        if tool.name in seen:
            yield Hit(
                "tools-duplicate",
                tool.line,
                f"tool {tool.name!r} is already declared on line {seen[tool.name]}; the reference"
                " does not de-duplicate. Remove this line.",
            )
        else:
            seen[tool.name] = tool.line
        if (
            options.available_tools is not None
            and is_tool_name
            and tool.name not in options.available_tools
        ):
            known = ", ".join(sorted(options.available_tools)) or "(none)"
            yield Hit(
                "tools-unknown",
                tool.line,
                f"tool {tool.name!r} is not among the available tools ({known}). Fix the spelling,"
                " or add the tool to skills_available_tools.",
            )


def _not_identifier(tool: ToolDeclaration) -> str:
    name = tool.name
    head = f"the reference declares a tool literally named {name!r}, which is not a tool name"
    if "#" in name:
        fix = (
            "the reference keeps an inline '# comment' in the name:"
            " put the comment on its own line"
        )
    elif ":" in name:
        fix = "remove the text after ':' (describe the tool in prose outside the section)"
    elif "`" in name or "*" in name:
        fix = "remove the Markdown formatting (backticks, asterisks) around the name"
    elif tool.after_break:
        fix = (
            "this bullet comes after a heading or prose line, so the reference still reads it as"
            " a tool: end the section with a line containing ':' (e.g. 'Usage:') before it"
        )
    else:
        fix = "use letters, digits, '_' and '-' only, starting with a letter or '_'"
    return f"{head}: {fix}."
