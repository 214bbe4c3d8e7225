"""Dynamic tool exposure (1.2.0's ``DynamicSkillToolSet``).

Only the pool tools that loaded skills declare and have selected reach the
model.  With ``only_active_skills`` (the reference default), the skills
whose loaded or tools key was written during the current turn are the only
ones considered; when no skill was touched this turn, every loaded skill
counts.  In once mode a skill shown and unloaded during the turn
(:attr:`~pytest_agent_skills.protocol.state.SessionState.shown_once`) still
offers every tool it declares until the turn ends, as in 1.2.0 (there it counts
as active; we count it without ``only_active_skills`` too, where 1.2.0 drops its
tools and refuses their calls).  A selected tool the pool does not hold is
reported as a :class:`~pytest_agent_skills.protocol.prompt.MissingTool`, never
dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..repository import SkillRepository
from .pool import PoolTool, ToolPool
from .prompt import MissingTool
from .state import SessionState


@dataclass(frozen=True)
class Exposure:
    tools: list[PoolTool]
    missing: list[MissingTool]


def skills_considered(
    state: SessionState, loaded: list[str], *, only_active_skills: bool
) -> list[str]:
    """Of the ``loaded`` skills (:meth:`SessionState.loaded_skills`) and those shown once
    this turn, the skills considered."""
    shown = sorted(name for name in state.shown_once if name not in loaded)
    if only_active_skills:
        active = [name for name in loaded if state.touched_this_turn(name)]
        if active or shown:
            return active + shown
    return loaded + shown


def selected_tool_names(repository: SkillRepository, state: SessionState, skill: str) -> list[str]:
    """The tools key of ``skill``; absent or ``"*"`` means every declared tool (as 1.2.0)."""
    selection = state.tools(skill)
    declared = repository.get(skill).tools
    if selection is None:
        return list(declared)
    return selection.expand(declared)


def expose(
    repository: SkillRepository,
    state: SessionState,
    pool: ToolPool,
    *,
    only_active_skills: bool,
    loaded: list[str] | None = None,
) -> Exposure:
    """The pool tools offered; ``loaded``: the loaded skills, when the caller has them."""
    tools: list[PoolTool] = []
    missing: list[MissingTool] = []
    seen: set[str] = set()
    loaded = state.loaded_skills() if loaded is None else loaded
    for skill in skills_considered(state, loaded, only_active_skills=only_active_skills):
        for name in selected_tool_names(repository, state, skill):
            if name in seen:
                continue
            tool = pool.get(name)
            if tool is None:
                missing.append(MissingTool(skill, name))
                continue
            seen.add(name)
            tools.append(tool)
    return Exposure(tools, missing)
