"""What one tool call produced, and the error results a model can read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .coercion import Coercion

#: Error codes of error results; the message says what was wrong and how to recover.
UNKNOWN_TOOL = "unknown_tool"
INVALID_ARGUMENTS = "invalid_arguments"
UNKNOWN_SKILL = "unknown_skill"
SKILL_NOT_LOADED = "skill_not_loaded"
UNKNOWN_DOC = "unknown_doc"
UNDECLARED_TOOL = "undeclared_tool"
WORKSPACE_ERROR = "workspace_error"
UNKNOWN_SESSION = "unknown_session"
TOOL_EXECUTION_ERROR = "tool_execution_error"


class ToolCallError(Exception):
    """Raised inside a tool for a model mistake; the session turns it into an error result.

    Not an :class:`~pytest_agent_skills.errors.AgentSkillsError`: it never
    leaves :meth:`SkillSession.call`.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def result(self) -> dict[str, str]:
        return error_result(self.code, self.message)


def error_result(code: str, message: str) -> dict[str, str]:
    """The shape of every error result (1.2.0's ``tool_execution_error`` shape, with a code)."""
    return {"error": code, "message": message, "status": "failed"}


@dataclass(frozen=True)
class ToolOutcome:
    """One tool call: what was asked, what came back, and the state it changed."""

    name: str
    #: The arguments as the model sent them (parsed); None when not a JSON object.
    arguments: dict[str, Any] | None
    result: Any
    is_error: bool = False
    state_delta: dict[str, str] = field(default_factory=dict)
    #: Lax values converted before the tool ran (``"5"`` -> 5 for an integer).
    coercions: tuple[Coercion, ...] = ()
    #: Schema violations a pool tool was called with all the same (a value of the wrong JSON
    #: type, handed over as the reference hands it), each ``path: message``.
    unchecked: tuple[str, ...] = ()

    @property
    def error_code(self) -> str | None:
        return self.result["error"] if self.is_error else None

    def content(self) -> str:
        """The tool message content sent back to the model.

        As in the reference, a result that is not a JSON object is wrapped
        as ``{"result": value}``.
        """
        payload = self.result if isinstance(self.result, dict) else {"result": self.result}
        return json.dumps(payload, ensure_ascii=False)

    def to_message(self, tool_call_id: str) -> dict[str, Any]:
        """An OpenAI chat ``tool`` message answering ``tool_call_id``."""
        return {"role": "tool", "tool_call_id": tool_call_id, "content": self.content()}
