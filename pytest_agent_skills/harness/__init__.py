"""The scripted-LLM harness: agent loop, models behind one seam, cassettes, assertions.

Public API::

    from pytest_agent_skills.harness import Conversation, RunSettings, run_conversation
    conversation = Conversation(repository, "Weather in Paris?", script=[...])
    outcome = run_conversation(conversation, settings=RunSettings(transport="sdk"))
    expect_calls(outcome.trajectory, ["skill_load", "skill_run"], mode="in_order")

The ``openai`` client, httpx and the HTTP server are imported only when a run uses them, and
the submodules of this package only when one of their names is first used.
"""

from __future__ import annotations

from .._lazy import lazy_exports

#: Public name -> submodule defining it.
_EXPORTS = {
    "AgentLoop": "loop",
    "CallRecord": "trajectory",
    "CassetteBackend": "cassette",
    "CassetteFormatError": "errors",
    "CassetteMissError": "errors",
    "CassetteUse": "outcome",
    "ChatModel": "models",
    "Conversation": "conversation",
    "ConversationFields": "conversation",
    "ExpectationError": "expect",
    "HarnessError": "errors",
    "LoopbackServer": "server",
    "Matcher": "cassette",
    "ModelError": "errors",
    "ModelTurn": "turns",
    "NoCassetteError": "errors",
    "OpenAIClientModel": "models",
    "RECORD_MODES": "cassette",
    "Redactor": "cassette",
    "Reply": "server",
    "RequestRecord": "trajectory",
    "RunOutcome": "outcome",
    "RunSettings": "run_settings",
    "ScriptExhaustedError": "errors",
    "ScriptedBackend": "server",
    "ScriptedModel": "models",
    "ScriptedTurn": "turns",
    "TRANSPORTS": "run_settings",
    "ToolCall": "turns",
    "Trajectory": "trajectory",
    "TurnLimitError": "errors",
    "TurnRecord": "trajectory",
    "UnusedInteractionsError": "errors",
    "UnusedTurnsError": "errors",
    "Upstream": "cassette",
    "UpstreamTimeoutError": "cassette",
    "UpstreamTooLargeError": "cassette",
    "UserTurn": "conversation",
    "UserTurnRecord": "trajectory",
    "assert_trajectory": "expect",
    "expect_calls": "expect",
    "expect_files": "expect",
    "expect_final": "expect",
    "expect_requests": "expect",
    "expect_results": "expect",
    "expect_state": "expect",
    "run_conversation": "runner",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
