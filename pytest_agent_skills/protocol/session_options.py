"""How a :class:`~.session.SkillSession` behaves: :class:`SessionOptions`, one frozen value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from .state import DEFAULT_LOAD_MODE


@dataclass(frozen=True)
class SessionOptions:
    """The switches of a skill session (``SkillSession(repository, options)``, or each as a
    keyword: ``SkillSession(repository, dynamic_tools=True)``)."""

    #: Offer ``skill_select_tools`` and expose only the tools loaded skills selected.
    dynamic_tools: bool = False
    #: Offer ``skill_exec``, ``skill_write_stdin``, ``skill_poll_session``, ``skill_kill_session``.
    exec_tools: bool = False
    #: With dynamic tools: only the skills touched this turn expose their tools.
    only_active_skills: bool = True
    #: How long loaded skills stay in the prompt: turn, once or session.
    load_mode: str = DEFAULT_LOAD_MODE
    session_id: str = "session"
    #: Text put before the skills overview in the system prompt.
    instruction: str = ""
    #: Report tools that loaded skills selected but the pool lacks in
    #: ``AssembledRequest.missing_tools`` instead of raising ``MissingToolError``.
    allow_missing_tools: bool = False
    #: Convert lax argument values (``"5"`` for an integer) as the reference's pydantic does,
    #: reporting each in ``ToolOutcome.coercions``.
    lax_arguments: bool = True


class SessionOptionFields(TypedDict, total=False):
    """The fields of :class:`SessionOptions`, as keywords of ``SkillSession(...)``."""

    dynamic_tools: bool
    exec_tools: bool
    only_active_skills: bool
    load_mode: str
    session_id: str
    instruction: str
    allow_missing_tools: bool
    lax_arguments: bool
