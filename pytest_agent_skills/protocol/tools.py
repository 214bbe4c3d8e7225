"""The ``skill_*`` tools: name, description, parameter schema and behaviour.

Each handler receives arguments already validated against the tool's JSON
Schema, reads the session state through :class:`ToolContext` (state merged
with the pending delta) and writes its changes into the pending delta.  A
model mistake (unknown skill, skill not loaded, unknown doc or tool name)
raises :class:`ToolCallError`, which the session turns into an error result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from ..files import FileReadError, resolve_inside
from ..repository import SkillRepository, UnknownSkillError
from ..skill import Skill
from .coercion import NO_LENIENCY, Leniency
from .outcome import (
    INVALID_ARGUMENTS,
    SKILL_NOT_LOADED,
    UNDECLARED_TOOL,
    UNKNOWN_DOC,
    UNKNOWN_SKILL,
    WORKSPACE_ERROR,
    ToolCallError,
)
from .pool import function_definition, schema_validator
from .selection import DEFAULT_MODE, MODES, apply_selection
from .state import LOADED_VALUE, Selection, SessionState, StateKeys

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from ..workspace import Workspace


@dataclass
class ToolContext:
    repository: SkillRepository
    state: SessionState
    #: The session's workspace, created on first use.
    workspace: Callable[[], Workspace]
    #: The workspace if one exists already (skill_load stages into it), else None.
    existing_workspace: Callable[[], Workspace | None]
    #: Environment added to every skill_run (the call's own env wins).
    run_env: dict[str, str]

    @property
    def keys(self) -> StateKeys:
        return self.state.keys

    def write(self, key: str, value: str) -> None:
        self.state.pending[key] = value


Handler = Callable[[ToolContext, dict[str, Any]], Any]


@dataclass(frozen=True)
class SkillTool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    #: The parameters that take more than the schema says, as the reference reads them
    #: (see :mod:`.coercion`).
    leniency: Leniency = NO_LENIENCY

    def definition(self) -> dict[str, Any]:
        return function_definition(self.name, self.description, self.parameters)

    @cached_property
    def validator(self) -> Validator:
        """The validator of this tool's arguments, built once."""
        return schema_validator(self.parameters)


def skill_resources(skill: Skill) -> list[str]:
    """The doc paths a model can list and select: docs and scripts, sorted (as in 1.2.0)."""
    return sorted({*skill.docs, *skill.scripts})


def resource_name(skill: Skill, name: str, resources: Collection[str]) -> str | None:
    """The path in ``resources`` (the skill's :func:`skill_resources`) of the doc ``name``
    leads to: ``name`` itself, or the real path of a doc reached through a folder linked
    inside the skill (``docs/a.md`` with ``docs -> shared/docs`` is ``shared/docs/a.md``, the
    name SKILL.md may well use); None for a name that leads to no listed doc (nothing outside
    the skill is ever one)."""
    if name in resources:
        return name
    root = skill.directory.resolve()
    try:
        real = resolve_inside(root, os.path.join(root, name))
    except (FileReadError, ValueError):  # outside the skill; a NUL byte in the name
        return None
    relative = os.path.relpath(real, root).replace(os.sep, "/")
    return relative if relative in resources else None


def _object(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


_STRING_LIST = {"type": "array", "items": {"type": "string"}}
_SKILL_NAME = {
    "type": "string",
    "description": "The skill name, as listed under 'Available skills'.",
}
_MODE = {
    "type": "string",
    "enum": list(MODES),
    "default": DEFAULT_MODE,
    "description": "add: add to the current selection; replace: replace it (default);"
    " clear: select nothing.",
}


def _selection_parameters(items: str, items_help: str, all_help: str) -> dict[str, Any]:
    """Parameters of skill_select_docs / skill_select_tools."""
    return _object(
        {
            "skill_name": _SKILL_NAME,
            items: {**_STRING_LIST, "description": items_help},
            f"include_all_{items}": {"type": "boolean", "default": False, "description": all_help},
            "mode": _MODE,
        },
        ["skill_name"],
    )


def _skill(context: ToolContext, raw_name: str, parameter: str = "skill_name") -> Skill:
    name = raw_name.strip()
    if not name:
        raise ToolCallError(
            INVALID_ARGUMENTS,
            f"{parameter} must not be empty; pass a skill name from the 'Available skills' list.",
        )
    try:
        return context.repository.get(name)
    except UnknownSkillError as error:
        raise ToolCallError(UNKNOWN_SKILL, f"{error}. Call skill_list to see the skills.") from None


def _loaded_skill(context: ToolContext, raw_name: str) -> Skill:
    """The skill ``raw_name``, loaded - or shown once this turn: once mode unloads a skill
    after one request, and its selections still count until the turn ends (as in 1.2.0)."""
    skill = _skill(context, raw_name)
    state = context.state
    if not state.is_loaded(skill.name) and skill.name not in state.shown_once:
        raise ToolCallError(
            SKILL_NOT_LOADED,
            f"skill {skill.name!r} is not loaded. Call skill_load with"
            f" skill_name={skill.name!r} first.",
        )
    return skill


def _check_names(
    skill: Skill, wanted: Sequence[str], known: Sequence[str], code: str, what: str
) -> None:
    unknown = [name for name in wanted if name not in known]
    if unknown:
        listing = ", ".join(known) if known else "(none)"
        raise ToolCallError(
            code,
            f"skill {skill.name!r} has no {what} {', '.join(repr(n) for n in unknown)}."
            f" Its {what}s are: {listing}.",
        )


def _check_docs(skill: Skill, docs: Sequence[str]) -> None:
    resources = skill_resources(skill)
    unknown = [doc for doc in docs if resource_name(skill, doc, resources) is None]
    _check_names(skill, unknown, resources, UNKNOWN_DOC, "doc")


def _check_tools(skill: Skill, tools: Sequence[str]) -> None:
    _check_names(skill, tools, skill.tools, UNDECLARED_TOOL, "tool")


# --- skill_list -------------------------------------------------------------------------------


def _skill_list(context: ToolContext, arguments: dict[str, Any]) -> list[str]:
    return context.repository.names()


# --- skill_load -------------------------------------------------------------------------------


def _skill_load(context: ToolContext, arguments: dict[str, Any]) -> str:
    requested = arguments["skill_name"]
    skill = _skill(context, requested)
    include_all = arguments.get("include_all_docs", False)
    docs: list[str] | None = None
    if "docs" in arguments:
        # As the reference: names stripped, blank ones dropped, duplicates kept.
        docs = [doc.strip() for doc in arguments["docs"] if doc.strip()]
    if docs and not include_all:
        _check_docs(skill, docs)
    name = skill.name
    keys = context.keys
    reload = context.state.is_loaded(name)
    context.write(keys.loaded(name), LOADED_VALUE)
    if include_all:
        context.write(keys.docs(name), Selection(include_all=True).encode())
    elif docs is not None:
        context.write(keys.docs(name), Selection(names=tuple(docs)).encode())
    elif not reload or context.state.get(keys.docs(name)) is None:
        context.write(keys.docs(name), Selection().encode())
    # The first load selects every declared tool; a reload keeps the selection (as documented:
    # "tool selection persists until modified by skill_select_tools").
    if skill.tools and (not reload or context.state.get(keys.tools(name)) is None):
        context.write(keys.tools(name), Selection(names=tuple(skill.tools)).encode())
    workspace = context.existing_workspace()
    if workspace is not None:
        with _workspace_errors():
            workspace.stage_skill(skill)
    # The name as asked for, padding included, in Python's repr: the reference's wording.
    return f"skill {requested!r} loaded"


# --- docs -------------------------------------------------------------------------------------


def _skill_list_docs(context: ToolContext, arguments: dict[str, Any]) -> list[str]:
    return skill_resources(_skill(context, arguments["skill_name"]))


def _select(
    context: ToolContext,
    arguments: dict[str, Any],
    *,
    items_field: str,
    all_field: str,
    key: Callable[[StateKeys, str], str],
    check: Callable[[Skill, Sequence[str]], None],
) -> dict[str, Any]:
    skill = _loaded_skill(context, arguments["skill_name"])
    mode = arguments.get("mode", DEFAULT_MODE)
    items: list[str] = arguments.get(items_field) or []
    include_all = arguments.get(all_field, False)
    if mode != "clear" and not include_all:
        check(skill, items)
    state_key = key(context.keys, skill.name)
    previous = Selection.decode(context.state.get(state_key))
    selection = apply_selection(previous, mode, items, include_all)
    context.write(state_key, selection.encode())
    return {
        "skill": skill.name,
        "mode": mode,
        f"selected_{items_field}": list(selection.names),
        all_field: selection.include_all,
    }


_skill_select_docs = partial(
    _select, items_field="docs", all_field="include_all_docs", key=StateKeys.docs, check=_check_docs
)


# --- tools ------------------------------------------------------------------------------------


def _skill_list_tools(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    requested = arguments["skill_name"]
    skill = _skill(context, requested)
    # The name echoed as asked for, padding included (the reference's result).
    return {"skill_name": requested, "available_tools": list(skill.tools)}


_skill_select_tools = partial(
    _select,
    items_field="tools",
    all_field="include_all_tools",
    key=StateKeys.tools,
    check=_check_tools,
)


# --- skill_run --------------------------------------------------------------------------------


@contextmanager
def _workspace_errors() -> Iterator[None]:
    """A workspace refusal (bad cwd or glob, staging failure) becomes an error result."""
    from ..workspace.errors import WorkspaceError

    try:
        yield
    except WorkspaceError as error:
        raise ToolCallError(WORKSPACE_ERROR, str(error)) from None


def run_options(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``Workspace.run`` (and ``exec``) from a call's arguments."""
    return {
        "output_files": tuple(arguments.get("output_files", ())),
        "env": {**context.run_env, **arguments.get("env", {})} or None,
        "timeout": arguments.get("timeout") or None,
        "stdin": arguments.get("stdin", ""),
        "save_as_artifacts": arguments.get("save_as_artifacts", False),
        "omit_inline_content": arguments.get("omit_inline_content", False),
        "cwd": arguments.get("cwd", ""),
    }


def _skill_run(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    skill = _skill(context, arguments["skill"], "skill")
    with _workspace_errors():
        result = context.workspace().run(
            skill, arguments["command"], **run_options(context, arguments)
        )
    return result.to_dict()


# --- the tool set -----------------------------------------------------------------------------

SKILL_LOAD = SkillTool(
    "skill_load",
    "Load a skill: its SKILL.md body (and the docs you name) is added to your context from the"
    " next turn on, and the tools it declares are selected. Safe to call again to change the"
    " docs. The skill names and descriptions are already listed under 'Available skills'.",
    _object(
        {
            "skill_name": _SKILL_NAME,
            "docs": {**_STRING_LIST, "description": "Doc paths to load (see skill_list_docs)."},
            "include_all_docs": {
                "type": "boolean",
                "default": False,
                "description": "Load every doc of the skill.",
            },
        },
        ["skill_name"],
    ),
    _skill_load,
    Leniency(lists=("docs",), string_items=("docs",)),
)

SKILL_RUN = SkillTool(
    "skill_run",
    "Run a shell command in the skill's folder inside an isolated workspace and return stdout,"
    " stderr, exit_code, timed_out, duration_ms and the files matched by output_files."
    " Environment: $WORKSPACE_DIR, $SKILLS_DIR, $WORK_DIR (inputs in $WORK_DIR/inputs),"
    " $OUTPUT_DIR, $RUN_DIR, $SKILL_NAME. Write results under $OUTPUT_DIR and collect them with"
    ' output_files globs such as "out/*.txt" or "$OUTPUT_DIR/*.json".',
    _object(
        {
            "skill": _SKILL_NAME,
            "command": {
                "type": "string",
                "minLength": 1,
                "description": "The shell command (run with bash).",
            },
            "output_files": {
                **_STRING_LIST,
                "description": "Globs of files to return, relative to the"
                " workspace (out/*.txt) or under $OUTPUT_DIR.",
            },
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Extra environment variables.",
            },
            "timeout": {
                "type": "integer",
                "minimum": 0,
                "description": "Timeout in seconds; 0 means the default (300).",
            },
            "cwd": {
                "type": "string",
                "description": "Working directory relative to the skill folder.",
            },
            "stdin": {"type": "string", "description": "Text sent to the command's stdin."},
            "save_as_artifacts": {
                "type": "boolean",
                "default": False,
                "description": "Also save the output files as artifacts.",
            },
            "omit_inline_content": {
                "type": "boolean",
                "default": False,
                "description": "Return output file metadata only.",
            },
        },
        ["skill", "command"],
    ),
    _skill_run,
    Leniency(floored=("timeout",)),
)

SKILL_LIST = SkillTool(
    "skill_list",
    "List the names of all available skills.",
    _object({}),
    _skill_list,
    Leniency(ignored=("mode",)),  # 1.2.0's mode (all / available), which it ignores
)

SKILL_LIST_DOCS = SkillTool(
    "skill_list_docs",
    "List the doc paths of a skill (files you can load with skill_select_docs or skill_load docs).",
    _object({"skill_name": _SKILL_NAME}, ["skill_name"]),
    _skill_list_docs,
)

SKILL_SELECT_DOCS = SkillTool(
    "skill_select_docs",
    "Choose which docs of a loaded skill are in your context: mode=add to add, replace to"
    " replace (default), clear to remove all.",
    _selection_parameters(
        "docs", "Doc paths (see skill_list_docs).", "Select every doc of the skill."
    ),
    _skill_select_docs,
    Leniency(lists=("docs",), folded=("mode",)),
)

SKILL_LIST_TOOLS = SkillTool(
    "skill_list_tools",
    "List the tools a skill declares in the 'Tools:' section of its SKILL.md.",
    _object({"skill_name": _SKILL_NAME}, ["skill_name"]),
    _skill_list_tools,
)

SKILL_SELECT_TOOLS = SkillTool(
    "skill_select_tools",
    "Choose which of a loaded skill's declared tools are offered to you: mode=add to add,"
    " replace to replace (default), clear to remove all. Loading a skill selects all of them;"
    " select fewer to save tokens.",
    _selection_parameters(
        "tools", "Tool names (see skill_list_tools).", "Select every tool the skill declares."
    ),
    _skill_select_tools,
    Leniency(lists=("tools",), folded=("mode",)),
)

#: The tools of every session, in the order of 1.2.0's ``SkillToolSet``.
BASE_TOOLS: tuple[SkillTool, ...] = (
    SKILL_LOAD,
    SKILL_RUN,
    SKILL_LIST,
    SKILL_LIST_DOCS,
    SKILL_SELECT_DOCS,
)
#: Added with dynamic tool exposure, as 1.2.0's ``SkillToolSetWithDynamicTools`` does.
DYNAMIC_TOOLS: tuple[SkillTool, ...] = (SKILL_LIST_TOOLS, SKILL_SELECT_TOOLS)
ALL_TOOLS: tuple[SkillTool, ...] = BASE_TOOLS + DYNAMIC_TOOLS
