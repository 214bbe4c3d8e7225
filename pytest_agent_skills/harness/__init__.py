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

from typing import TYPE_CHECKING

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


if TYPE_CHECKING:  # the lazy names' own types, for type checkers
    from .cassette import RECORD_MODES as RECORD_MODES
    from .cassette import CassetteBackend as CassetteBackend
    from .cassette import Matcher as Matcher
    from .cassette import Redactor as Redactor
    from .cassette import Upstream as Upstream
    from .cassette import UpstreamTimeoutError as UpstreamTimeoutError
    from .cassette import UpstreamTooLargeError as UpstreamTooLargeError
    from .conversation import Conversation as Conversation
    from .conversation import ConversationFields as ConversationFields
    from .conversation import UserTurn as UserTurn
    from .errors import CassetteFormatError as CassetteFormatError
    from .errors import CassetteMissError as CassetteMissError
    from .errors import HarnessError as HarnessError
    from .errors import ModelError as ModelError
    from .errors import NoCassetteError as NoCassetteError
    from .errors import ScriptExhaustedError as ScriptExhaustedError
    from .errors import TurnLimitError as TurnLimitError
    from .errors import UnusedInteractionsError as UnusedInteractionsError
    from .errors import UnusedTurnsError as UnusedTurnsError
    from .expect import ExpectationError as ExpectationError
    from .expect import assert_trajectory as assert_trajectory
    from .expect import expect_calls as expect_calls
    from .expect import expect_files as expect_files
    from .expect import expect_final as expect_final
    from .expect import expect_requests as expect_requests
    from .expect import expect_results as expect_results
    from .expect import expect_state as expect_state
    from .loop import AgentLoop as AgentLoop
    from .models import ChatModel as ChatModel
    from .models import OpenAIClientModel as OpenAIClientModel
    from .models import ScriptedModel as ScriptedModel
    from .outcome import CassetteUse as CassetteUse
    from .outcome import RunOutcome as RunOutcome
    from .run_settings import TRANSPORTS as TRANSPORTS
    from .run_settings import RunSettings as RunSettings
    from .runner import run_conversation as run_conversation
    from .server import LoopbackServer as LoopbackServer
    from .server import Reply as Reply
    from .server import ScriptedBackend as ScriptedBackend
    from .trajectory import CallRecord as CallRecord
    from .trajectory import RequestRecord as RequestRecord
    from .trajectory import Trajectory as Trajectory
    from .trajectory import TurnRecord as TurnRecord
    from .trajectory import UserTurnRecord as UserTurnRecord
    from .turns import ModelTurn as ModelTurn
    from .turns import ScriptedTurn as ScriptedTurn
    from .turns import ToolCall as ToolCall


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
