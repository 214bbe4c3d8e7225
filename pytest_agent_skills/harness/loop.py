"""The agent loop: user message -> request -> model turn -> tool calls -> ... -> final text.

Tool calls go through :meth:`SkillSession.call`, the same path a real
model's calls take (argument validation, the tool, the state delta), and the
next request is assembled by the session from the conversation so far.
"""

from __future__ import annotations

from typing import Any

from .errors import HarnessError, TurnLimitError
from .models import ChatModel
from .trajectory import CallRecord, RequestRecord, Trajectory, TurnRecord, capture_files
from .turns import DEFAULT_MAX_TURNS, SCRIPTED_MODEL_NAME


class AgentLoop:
    """Runs one conversation between a model and a :class:`SkillSession`."""

    def __init__(
        self,
        session: Any,
        model: ChatModel,
        *,
        model_name: str = SCRIPTED_MODEL_NAME,
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        self.session = session
        self.model = model
        self.model_name = model_name
        self.max_turns = max_turns

    def run(self, user: str) -> Trajectory:
        """The trajectory of the conversation; a harness failure carries the partial one."""
        trajectory = Trajectory(user)
        try:
            self._converse(user, trajectory)
            self.model.finish()
        except HarnessError as error:
            error.trajectory = trajectory
            raise
        finally:
            self._snapshot(trajectory)
        return trajectory

    def _converse(self, user: str, trajectory: Trajectory) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        for index in range(self.max_turns):
            assembled = self.session.build_request(messages)
            # Not to_openai_kwargs(): its deep copy costs ~1 ms a turn, and nothing here
            # mutates a message once it is in the conversation.
            body: dict[str, Any] = {"model": self.model_name, "messages": list(assembled.messages)}
            if assembled.tools:  # the OpenAI API rejects an empty tools list
                body["tools"] = assembled.tools
            trajectory.requests.append(
                RequestRecord(index, assembled.system, tuple(assembled.tool_names), body)
            )
            turn = self.model.complete(body)
            messages.append(turn.to_message())
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
                    )
                )
            trajectory.turns.append(TurnRecord(index, turn.text, tuple(calls)))
            if turn.is_final:
                trajectory.final = turn.text or ""
                return
        raise TurnLimitError(
            f"turn limit: the model made {self.max_turns} turns with tool calls and never answered"
            " with a final text turn (a runaway loop?). Raise max_turns if the conversation really"
            " needs more turns."
        )

    def _snapshot(self, trajectory: Trajectory) -> None:
        trajectory.state = dict(self.session.state)
        workspace = self.session.workspace
        if workspace is not None:
            trajectory.workspace = workspace.path
            trajectory.files = capture_files(workspace.path)
