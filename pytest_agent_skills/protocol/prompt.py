"""Prompt assembly: the system text a model sees at each request.

The layout is 1.2.0's: the overview (``Available skills:`` and one
``- name: description`` line per skill, sorted), a guidance block, then for
each loaded skill, sorted by name, ``[Loaded] <name>``, its body, ``Docs
loaded:`` with each selected doc under ``[Doc] <path>``, and ``Tools
selected:``.  Our guidance block names only tools that exist in the session
(1.2.0's names ``skill_list_skills``, which does not exist, and ends two
lines with a stray quote).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..files import FileReadError
from ..repository import SkillRepository
from ..skill import Skill
from .state import SessionState
from .tools import resource_name, skill_resources

OVERVIEW_HEADER = "Available skills:"
GUIDANCE_HEADER = "Tooling and workspace guidance:"

_GUIDANCE = (
    "- The skill summaries above are routing summaries only. Before using a skill, load it"
    " with skill_load; do not infer commands or file layouts from the summary alone.\n"
    "- Loading a skill adds its SKILL.md to your context; it does not run anything.\n"
    "- Use skill_list_docs and skill_select_docs to load only the docs you need; avoid"
    " include_all_docs unless the task needs the whole doc set.\n"
    "- skill_run runs a command with the skill folder as working directory, inside an"
    " isolated workspace. Invoke scripts through an interpreter and a path"
    " (python3 scripts/foo.py).\n"
    "- Read inputs from $WORK_DIR/inputs and do not modify them; write results under"
    " $OUTPUT_DIR and collect them with output_files globs (out/*.txt).\n"
    "- Prefer $WORK_DIR, $OUTPUT_DIR, $RUN_DIR and $WORKSPACE_DIR over hard-coded paths.\n"
    "- Do not rerun a command when you already have its result; answer instead.\n"
)
_EXEC_GUIDANCE = (
    "- Use skill_exec only for a command that asks for input (a prompt, a menu, a terminal"
    " program); answer it with skill_write_stdin (submit=true ends the line), read more with"
    " skill_poll_session and stop it with skill_kill_session. Otherwise prefer skill_run.\n"
)
_DYNAMIC_GUIDANCE = (
    "- Loading a skill offers you the tools it declares; use skill_list_tools to see them"
    " and skill_select_tools to keep only those the task needs.\n"
)


def overview_text(
    repository: SkillRepository, *, dynamic_tools: bool, exec_tools: bool = False
) -> str:
    lines = [OVERVIEW_HEADER, "\n"]
    lines.extend(f"- {summary.name}: {summary.description}\n" for summary in repository.summaries())
    lines.append(f"\n{GUIDANCE_HEADER}\n{_GUIDANCE}")
    if exec_tools:
        lines.append(_EXEC_GUIDANCE)
    if dynamic_tools:
        lines.append(_DYNAMIC_GUIDANCE)
    return "".join(lines)


def loaded_skill_text(skill: Skill, docs: list[str], tools: list[str]) -> str:
    """The block of one loaded skill, byte for byte as 1.2.0 writes it."""
    parts: list[str] = []
    body = skill.substitute_base_dir(skill.runtime_body)
    if body:
        parts.append(f"\n[Loaded] {skill.name}\n\n{body}\n")
    parts.append("Docs loaded: ")
    if docs:
        parts.append(", ".join(docs) + "\n")
        resources = skill_resources(skill)
        # A doc named through a folder linked inside the skill too.
        wanted = {resource_name(skill, doc, resources) for doc in docs}
        for path in resources:
            if path not in wanted:
                continue
            content = _doc_text(skill, path)
            if content:
                parts.append(f"\n[Doc] {path}\n\n{content}\n")
    else:
        parts.append("none\n")
    parts.append("Tools selected: ")
    parts.append(", ".join(tools) + "\n" if tools else "none\n")
    return "".join(parts)


def _doc_text(skill: Skill, path: str) -> str:
    """The text of a selected doc as 1.2.0 shows it: read with universal newlines (``\r\n``
    and a lone ``\r`` are ``\n``)."""
    try:
        text = skill.read_text(path)
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    except UnicodeDecodeError:
        # 1.2.0 drops such files from the resources; we list them, so say why there is no text.
        return f"(not shown: {path} is not UTF-8 text)"
    except FileReadError as error:  # a link out of the skill, a named pipe, too large
        return f"(not shown: {path} {error.reason})"


def loaded_text(repository: SkillRepository, state: SessionState, loaded: list[str]) -> str:
    """The blocks of the ``loaded`` skills (:meth:`SessionState.loaded_skills`), in order."""
    blocks: list[str] = []
    for name in loaded:
        skill = repository.get(name)
        docs_selection = state.docs(name)
        tools_selection = state.tools(name)
        docs = docs_selection.expand(skill_resources(skill)) if docs_selection else []
        tools = tools_selection.expand(skill.tools) if tools_selection else []
        blocks.append(loaded_skill_text(skill, docs, tools))
    return "".join(blocks)


def system_text(instruction: str, overview: str, loaded: str) -> str:
    """``instruction``, the overview (:func:`overview_text`; empty for an empty repository)
    and the loaded skills (:func:`loaded_text`), joined as 1.2.0 joins them."""
    return "\n\n".join(section for section in (instruction, overview, loaded) if section)


@dataclass(frozen=True)
class MissingTool:
    """A tool a loaded skill selected that the tool pool does not hold."""

    skill: str
    tool: str

    def message(self) -> str:
        return (
            f"skill {self.skill!r} declares tool {self.tool!r} in its Tools: section, but the"
            f" tool pool has no tool of that name; register it (ToolPool.register or"
            f" ToolPool.stub) or remove it from the skill's Tools: section"
        )


@dataclass(frozen=True)
class AssembledRequest:
    """Exactly what a model would be sent: system text, messages and tools."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    loaded_skills: list[str] = field(default_factory=list)
    missing_tools: list[MissingTool] = field(default_factory=list)
    #: Keys the request removed (key -> None): at a new user turn, and in once mode the
    #: skills it showed (see :mod:`.state`).
    state_delta: dict[str, None] = field(default_factory=dict)

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools]

    def to_openai_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.chat.completions.create(**kwargs, model=...)``."""
        return {"messages": copy.deepcopy(self.messages), "tools": copy.deepcopy(self.tools)}
