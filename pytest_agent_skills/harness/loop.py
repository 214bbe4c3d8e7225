"""The agent loop: user message -> request -> model turn -> tool calls -> ... -> final text,
once per user message of the conversation.

Tool calls go through :meth:`SkillSession.call`, the same path a real
model's calls take (argument validation, the tool, the state delta), and the
next request is assembled by the session from the conversation so far (every
earlier user turn included, as the reference's history is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .conversation import UserTurn
from .errors import HarnessError, TurnLimitError
from .models import ChatModel
from .trajectory import (
    CallRecord,
    RequestRecord,
    Trajectory,
    TurnRecord,
    UserTurnRecord,
    capture_files,
)
from .turns import DEFAULT_MAX_TURNS, SCRIPTED_MODEL_NAME

#: Request fields about the tools, left out of a request that offers none.
TOOL_FIELDS = ("tool_choice", "parallel_tool_calls")


class AgentLoop:
    """Runs one conversation between a model and a :class:`SkillSession`."""

    def __init__(
        self,
        session: Any,
        model: ChatModel,
        *,
        model_name: str = SCRIPTED_MODEL_NAME,
        max_turns: int = DEFAULT_MAX_TURNS,
        request_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.session = session
        self.model = model
        self.model_name = model_name
        #: Model turns one user message may take before the loop calls it runaway.
        self.max_turns = max_turns
        #: Fields added to every request (temperature, seed, max_tokens...); the settings
        #: that build them refuse the fields the loop writes.
        self.request_params = dict(request_params or {})

    def run(self, user: str | Sequence[UserTurn]) -> Trajectory:
        """The trajectory of the conversation (one user message, or several user turns); a
        harness failure carries the partial one."""
        turns = [UserTurn(user)] if isinstance(user, str) else list(user)
        trajectory = Trajectory(
            turns[0].user, load_mode=getattr(self.session, "load_mode", "turn")
        )
        messages: list[dict[str, Any]] = []
        begin = getattr(self.model, "begin_user_turn", None)
        try:
            for index, turn in enumerate(turns):
                if begin is not None:
                    begin(index)
                part = UserTurnRecord(index, turn.user, len(trajectory.turns), 0)
                trajectory.user_turns.append(part)
                messages.append({"role": "user", "content": turn.user})
                self._converse(messages, trajectory, part)
                if index < len(turns) - 1:
                    self._snapshot(part)
            self.model.finish()
        except HarnessError as error:
            error.trajectory = trajectory
            raise
        finally:
            self._snapshot(trajectory)
            # The last user turn (or the one that failed) ends with the conversation.
            last = trajectory.user_turns[-1] if trajectory.user_turns else None
            if last is not None:
                last.state, last.files = trajectory.state, trajectory.files
        return trajectory

    def _converse(
        self, messages: list[dict[str, Any]], trajectory: Trajectory, part: UserTurnRecord
    ) -> None:
        for _ in range(self.max_turns):
            index = len(trajectory.turns)
            assembled = self.session.build_request(messages)
            # Not to_openai_kwargs(): it deep-copies the whole conversation at every turn,
            # and nothing here mutates a message once it is in the conversation.
            body: dict[str, Any] = {"model": self.model_name, "messages": list(assembled.messages)}
            if assembled.tools:  # the OpenAI API rejects an empty tools list
                body["tools"] = assembled.tools
            body.update(self.request_params)
            if "tools" not in body:  # the OpenAI API refuses tool settings without tools
                for name in TOOL_FIELDS:
                    body.pop(name, None)
            trajectory.requests.append(
                RequestRecord(
                    index,
                    assembled.system,
                    tuple(assembled.tool_names),
                    body,
                    dict(assembled.state_delta),
                )
            )
            turn = self.model.complete(body)
            messages.append(turn.history_message())
            calls = []
            for tool_call in turn.tool_calls:
                outcome = self.session.call(tool_call.name, tool_call.arguments)
                messages.append(outcome.to_message(tool_call.id))
                calls.append(
                    CallRecord(
                        index,
                        tool_call.id,
                        tool_call.name,
                        tool_call.arguments,
                        outcome.arguments,
                        outcome.result,
                        outcome.is_error,
                        dict(outcome.state_delta),
                        outcome.coercions,
                    )
                )
            trajectory.turns.append(TurnRecord(index, turn.text, tuple(calls)))
            part.end = len(trajectory.turns)
            if turn.is_final:
                part.final = turn.text or ""
                trajectory.final = part.final
                return
        raise TurnLimitError(
            f"turn limit: the model made {self.max_turns} turns with tool calls and never answered"
            " with a final text turn (a runaway loop?). Raise max_turns if the conversation really"
            " needs more turns."
        )

    def _snapshot(self, target: Trajectory | UserTurnRecord) -> None:
        target.state = dict(self.session.state)
        workspace = self.session.workspace
        if workspace is not None:
            if isinstance(target, Trajectory):
                target.workspace = workspace.path
            target.files = capture_files(workspace.path)
