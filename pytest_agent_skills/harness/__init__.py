"""The scripted-LLM harness: agent loop, models behind one seam, cassettes, assertions.

Public API::

    from pytest_agent_skills.harness import run_conversation, expect_calls
    outcome = run_conversation(repository, "Weather in Paris?", script=[...])
    expect_calls(outcome.trajectory, ["skill_load", "skill_run"], mode="in_order")

The ``openai`` client, httpx and werkzeug are imported only when a run uses them.
"""

from __future__ import annotations

from .cassette import RECORD_MODES, CassetteBackend, Matcher, Redactor, Upstream
from .errors import (
    CassetteMissError,
    HarnessError,
    ModelError,
    NoCassetteError,
    ScriptExhaustedError,
    TurnLimitError,
    UnusedInteractionsError,
    UnusedTurnsError,
)
from .expect import (
    ExpectationError,
    assert_trajectory,
    expect_calls,
    expect_files,
    expect_final,
    expect_requests,
    expect_results,
    expect_state,
)
from .loop import AgentLoop
from .models import ChatModel, OpenAIClientModel, ScriptedModel
from .runner import TRANSPORTS, ModelOptions, RunOutcome, run_conversation
from .server import LoopbackServer, Reply, ScriptedBackend
from .trajectory import CallRecord, RequestRecord, Trajectory, TurnRecord
from .turns import ModelTurn, ScriptedTurn, ToolCall

__all__ = [
    "RECORD_MODES",
    "TRANSPORTS",
    "AgentLoop",
    "CallRecord",
    "CassetteBackend",
    "CassetteMissError",
    "ChatModel",
    "ExpectationError",
    "HarnessError",
    "LoopbackServer",
    "Matcher",
    "ModelError",
    "ModelOptions",
    "ModelTurn",
    "NoCassetteError",
    "OpenAIClientModel",
    "Redactor",
    "Reply",
    "RequestRecord",
    "RunOutcome",
    "ScriptExhaustedError",
    "ScriptedBackend",
    "ScriptedModel",
    "ScriptedTurn",
    "ToolCall",
    "Trajectory",
    "TurnLimitError",
    "TurnRecord",
    "UnusedInteractionsError",
    "UnusedTurnsError",
    "Upstream",
    "assert_trajectory",
    "expect_calls",
    "expect_files",
    "expect_final",
    "expect_requests",
    "expect_results",
    "expect_state",
    "run_conversation",
]
