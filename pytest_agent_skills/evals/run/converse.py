"""One conversation of an eval run: a skill session, the agent loop, the real ``openai``
client answered by the loopback server's handler, in process, from the run's cassette."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import AgentSkillsError
from ...harness.cassette import DEFAULT_IGNORED_FIELDS, Matcher
from ...harness.conversation import Conversation
from ...harness.errors import CassetteTooLargeError, TurnLimitError
from ...harness.runner import ServedModel, agent_loop
from ...harness.trajectory import Trajectory
from ...harness.turns import ModelTurn
from ..setup.budget import RUN_TOKENS, TURN_LIMIT, TokenBudget
from ..setup.eval_options import EvalOptions
from .transport import RunCassette, RunTokensError, UpstreamPool

if TYPE_CHECKING:
    from ...workspace import Runtime


@dataclass(frozen=True)
class ModelAccess:
    """What every run of an eval shares: the options, the pool of upstream connections and
    the runtime the model's commands run in (None: the run settings' one, else local)."""

    options: EvalOptions
    pool: UpstreamPool
    runtime: Runtime | None = None
    #: The eval's token budget, shared by every run.
    budget: TokenBudget = field(default_factory=TokenBudget)

    def cassette(
        self,
        path: Path,
        substitutions: Mapping[str, str] | Callable[[], Mapping[str, str]],
        mode: str | None = None,
        cap: int | None = None,
    ) -> RunCassette:
        """The cassette backend of one run at ``path``, this machine's paths matched by their
        stable names, its answers' tokens counted in the budget; ``mode`` instead of the
        options' record mode; ``cap``: the most tokens its requests may use."""
        return RunCassette(
            path,
            self.pool,
            budget=self.budget,
            cap=cap,
            mode=mode or self.options.record_mode,
            matcher=Matcher(
                ignored_fields=DEFAULT_IGNORED_FIELDS | set(self.options.settings.match_ignore),
                substitutions=substitutions,
            ),
            redactor=self.options.settings.redactor(),
        )


@dataclass
class Conversed:
    """What a conversation gave: its trajectory, its failure, the tokens the endpoint
    reported, the interactions recorded."""

    trajectory: Trajectory
    error: AgentSkillsError | None
    triggered: bool = False
    usage: dict[str, int] = field(default_factory=dict)
    recorded: int = 0
    #: The skill whose load ended the conversation (see ``stop_on_load``), or None.
    loaded: str | None = None
    #: Why the conversation stopped before the model's final answer, when a limit stopped
    #: it (``turn_limit``, ``run_tokens``): the model's failure, not the harness's.
    stop_reason: str | None = None
    stop_message: str = ""
    #: Why the recording was not written, when the failure is another one ("" otherwise).
    not_written: str = ""

    @property
    def tokens(self) -> int:
        return self.usage.get("total_tokens", 0)


#: The limits that stop a conversation as the model's failure, and their stop reasons.
_STOP_REASONS: dict[type[AgentSkillsError], str] = {
    TurnLimitError: TURN_LIMIT,
    RunTokensError: RUN_TOKENS,
}


class _LoadWatch:
    """A model that ends the conversation when the model calls ``skill_load`` for a watched
    skill: a trigger eval wants to know whether (and which) it loads, not what it does then.
    A load of a skill not watched goes on as the agent would."""

    def __init__(self, model: ServedModel, watched: str | frozenset[str]) -> None:
        self.model = model
        self.watched = frozenset((watched,)) if isinstance(watched, str) else watched
        #: The watched skill the model loaded (the first it called skill_load for), or None.
        self.loaded: str | None = None

    def complete(self, request: dict[str, Any]) -> ModelTurn:
        turn: ModelTurn = self.model.complete(request)
        for call in turn.tool_calls:
            named = loaded_name(call.name, call.arguments)
            if named in self.watched:
                self.loaded = named
                return ModelTurn(text="", origin=turn.origin)
        return turn

    def finish(self) -> None:
        self.model.finish()


def loaded_name(name: str, arguments: Any) -> str | None:
    """The skill a tool call (``arguments`` as JSON text or parsed) loads, or None when it is
    not a ``skill_load`` call naming one."""
    if name != "skill_load":
        return None
    if isinstance(arguments, str):
        import json

        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return str(arguments.get("skill_name", arguments.get("skill", ""))).strip() or None


def converse(
    access: ModelAccess,
    conversation: Conversation,
    roots: Mapping[str, str],
    stop_on_load: str | frozenset[str] | None = None,
) -> Conversed:
    """Have ``conversation`` (one user message and its cassette) with the eval's run
    settings, through the run's cassette backend (the shared upstream client, retries, token
    counts); ``roots`` names this machine's skill-root paths for matching; with
    ``stop_on_load`` (a skill's name, or a set of them), the conversation ends once the model
    loads that skill (one of them: :attr:`Conversed.loaded` says which).  A harness failure
    (the endpoint, the cassette) is returned in :attr:`Conversed.error` with the trajectory up
    to it; a limit that stopped the model (the turn limit, the run's token cap) in
    :attr:`Conversed.stop_reason`."""
    from ...protocol import SkillSession

    settings = access.options.settings
    name = conversation.model_name or settings.model_name
    session = SkillSession(
        conversation.repository,
        runtime=access.runtime or settings.runtime,
        inputs=conversation.inputs,
        env=conversation.env,
        load_mode=conversation.load_mode or settings.load_mode,
    )
    prompt = str(conversation.user)
    assert conversation.cassette is not None  # an eval's conversation is always recorded

    def machine_paths() -> dict[str, str]:
        workspace = session.workspace
        paths = dict(roots)
        if workspace is not None:
            paths[str(workspace.path)] = "<workspace>"
        return paths

    trajectory = Trajectory(prompt)
    error: AgentSkillsError | None = None
    watch: _LoadWatch | None = None
    cassette: RunCassette | None = None
    with contextlib.ExitStack() as stack:
        stack.callback(session.close)
        try:
            # A regrade replays the agent's side, whatever the grader's record mode.
            replay_only = "none" if access.options.regrade else None
            cassette = access.cassette(
                Path(conversation.cassette),
                machine_paths,
                replay_only,
                cap=access.options.max_run_tokens,
            )
            served = ServedModel(cassette, model_name=name, stream=False, in_process=True)
            stack.callback(served.close)
            model: ServedModel | _LoadWatch = served
            if stop_on_load is not None:
                model = watch = _LoadWatch(served, stop_on_load)
            trajectory = agent_loop(session, model, conversation, settings).run(
                conversation.user_turns
            )
        except AgentSkillsError as failure:
            error = failure
            trajectory = getattr(failure, "trajectory", None) or trajectory
            if cassette is not None:
                cassette.save_partial()
    if cassette is None:
        return Conversed(trajectory, error)
    usage = {
        "prompt_tokens": cassette.prompt_tokens,
        "completion_tokens": cassette.completion_tokens,
        "total_tokens": cassette.tokens,
    }
    loaded = watch.loaded if watch is not None else None
    conversed = Conversed(trajectory, error, loaded is not None, usage, cassette.recorded, loaded)
    if not isinstance(error, CassetteTooLargeError):
        conversed.not_written = cassette.not_written
    if error is not None and type(error) in _STOP_REASONS:
        conversed.stop_reason = _STOP_REASONS[type(error)]
        conversed.stop_message, conversed.error = str(error), None
    return conversed
