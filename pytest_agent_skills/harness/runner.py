"""Run one conversation end to end: repository, session, model, loop, checks.

:func:`run_conversation` is the library entry point behind both the
``*.scenario.yaml`` items and the ``skill_agent`` fixture; it works without
pytest.  The conversation is one ``user`` message or several ``turns``.  The
model is chosen by the arguments: a ``script`` reached ``direct``-ly (in
process), or through the real ``openai`` client and the loopback server
(``sdk``, ``sdk-stream``); or a ``cassette`` replayed (or recorded) behind the
same loopback server.  A conversation through the loopback server uses one
client and one keep-alive connection from its first request to its last.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..redaction import Redactor
from .cassette import DEFAULT_IGNORED_FIELDS, CassetteBackend, Matcher, Upstream
from .conversation import UserTurn, split_scripts, user_turns
from .errors import HarnessError
from .loop import AgentLoop
from .models import ChatModel, OpenAIClientModel, ScriptedModel
from .server import ScriptedBackend, shared_server
from .trajectory import Trajectory
from .turns import DEFAULT_MAX_TURNS, SCRIPTED_MODEL_NAME

TRANSPORTS = ("direct", "sdk", "sdk-stream")


@dataclass
class CassetteUse:
    """What a run did with its cassette, for the terminal summary."""

    path: Path
    mode: str
    recorded: int = 0
    replayed: int = 0
    unused: int = 0


@dataclass
class RunOutcome:
    trajectory: Trajectory
    repository: Any
    cassette: CassetteUse | None = None


@dataclass
class ModelOptions:
    """How to reach the model, shared by every run of a test session."""

    transport: str = "direct"
    record_mode: str = "none"
    upstream: Upstream | None = None
    secret_env: Sequence[str] = ("OPENAI_API_KEY",)
    model_name: str = SCRIPTED_MODEL_NAME
    match_ignore: Sequence[str] = field(default_factory=tuple)
    #: The skills' load mode: turn (the reference's default), once or session.
    load_mode: str = "turn"

    def redactor(self) -> Redactor:
        """What hides these options' secrets in cassettes and in the messages shown."""
        secrets = self.upstream.secrets if self.upstream else ()
        return Redactor(self.secret_env, extra_values=secrets)


class ServedModel:
    """The ``openai`` client talking to the loopback server, which serves ``backend``."""

    def __init__(self, backend: Any, *, model_name: str, stream: bool) -> None:
        self.backend = backend
        self.server = shared_server()
        self.key = self.server.mount(backend)
        self.client = OpenAIClientModel.connect(
            self.server.origin + self.key + "/v1",
            model=model_name,
            stream=stream,
            # Not a lambda over self: that cycle left each conversation's client to the GC.
            on_error=functools.partial(self.server.raise_error, self.key),
            timeout=getattr(backend, "answer_timeout", None),  # a recording may take longer
        )

    def complete(self, request: dict[str, Any]) -> Any:
        return self.client.complete(request)

    def begin_user_turn(self, index: int) -> None:
        begin = getattr(self.backend, "begin_user_turn", None)
        if begin is not None:
            begin(index)

    def finish(self) -> None:
        self.backend.finish()

    def close(self) -> None:
        self.server.unmount(self.key)


def run_conversation(
    repository: Any,
    user: str | None = None,
    *,
    turns: Sequence[UserTurn | Mapping[str, Any] | str] | None = None,
    script: Sequence[Any] | Callable[[dict[str, Any], int], Any] | None = None,
    cassette: Path | str | None = None,
    options: ModelOptions | None = None,
    transport: str | None = None,
    tools: Mapping[str, Mapping[str, Any]] | None = None,
    dynamic_tools: bool = False,
    exec_tools: bool = False,
    inputs: Mapping[str, str | bytes] | None = None,
    env: Mapping[str, str] | None = None,
    runtime: Any = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    allow_unused: bool = False,
    model_name: str | None = None,
    match_ignore: Sequence[str] = (),
    load_mode: str | None = None,
    expect: Mapping[str, Any] | None = None,
    where: Callable[[tuple[Any, ...]], str] | None = None,
    title: str = "",
) -> RunOutcome:
    """One conversation; raises a :class:`HarnessError` carrying ``.trajectory`` on failure.

    ``user`` is a single user message; ``turns`` a conversation of several, each a message
    or a mapping ``{user, script, expect}`` (see :class:`~.conversation.UserTurn`).  The model
    turns come from one ``script`` or ``cassette`` for the whole conversation, or from each
    turn's own ``script``.  ``expect`` (the scenario ``expect:`` block) and the turns' own
    ``expect`` are checked at the end: an :class:`~.expect.ExpectationError` lists every
    unmet one (``where`` and ``title`` shape its lines).
    """
    from ..protocol import SessionConfigError, SkillSession, ToolPool

    options = options or ModelOptions()
    conversation = user_turns(user, turns)
    scripts = split_scripts(conversation, script, cassette)
    transport = transport or options.transport
    if transport not in TRANSPORTS:
        raise HarnessError(f"unknown transport {transport!r} (choose from {', '.join(TRANSPORTS)})")
    pool = ToolPool()
    for name, spec in (tools or {}).items():
        parameters = spec.get("parameters") or {"type": "object", "properties": {}}
        pool.stub(name, spec.get("description", ""), dict(parameters), spec.get("returns"))
    try:
        session = SkillSession(
            repository,
            runtime=runtime,
            tool_pool=pool,
            dynamic_tools=dynamic_tools,
            exec_tools=exec_tools,
            inputs=inputs,
            env=env,
            load_mode=load_mode or options.load_mode,
        )
    except SessionConfigError as error:
        raise HarnessError(str(error)) from None
    name = model_name or options.model_name
    use: CassetteUse | None = None
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(session.close)
            if scripts is not None:
                scripted = ScriptedModel.per_user_turn(scripts, allow_unused=allow_unused)
                model = _scripted(scripted, transport, name, stack)
            elif script is not None:
                scripted = ScriptedModel(script, allow_unused=allow_unused)
                model = _scripted(scripted, transport, name, stack)
            else:
                backend = CassetteBackend(
                    Path(cassette),  # type: ignore[arg-type]
                    mode=options.record_mode,
                    upstream=options.upstream,
                    matcher=Matcher(
                        ignored_fields=DEFAULT_IGNORED_FIELDS
                        | set(options.match_ignore)
                        | set(match_ignore),
                        substitutions=_machine_paths(repository, session),
                    ),
                    redactor=options.redactor(),
                    allow_unused=allow_unused,
                )
                use = CassetteUse(backend.path, backend.mode)
                model = _served(backend, name, transport, stack)
                stack.callback(_count, use, backend)
            loop = AgentLoop(session, model, model_name=name, max_turns=max_turns)
            trajectory = loop.run(conversation)
        turn_expects = [turn.expect for turn in conversation]
        if expect is not None or any(check is not None for check in turn_expects):
            from .expect import assert_trajectory

            assert_trajectory(
                trajectory, expect or {}, turns=turn_expects, where=where, title=title
            )
    except HarnessError as error:
        error.cassette_use = use
        raise
    return RunOutcome(trajectory, repository, use)


def _scripted(
    scripted: ScriptedModel, transport: str, name: str, stack: contextlib.ExitStack
) -> ChatModel:
    if transport == "direct":
        return scripted
    return _served(ScriptedBackend(scripted), name, transport, stack)


def _served(backend: Any, name: str, transport: str, stack: contextlib.ExitStack) -> ServedModel:
    """``backend`` behind the loopback server, unmounted when ``stack`` closes."""
    served = ServedModel(backend, model_name=name, stream=transport == "sdk-stream")
    stack.callback(served.close)
    return served


def _count(use: CassetteUse, backend: CassetteBackend) -> None:
    use.recorded, use.replayed, use.unused = backend.recorded, backend.replayed, len(backend.unused)


def _machine_paths(repository: Any, session: Any) -> Callable[[], dict[str, str]]:
    """This machine's paths and their stable names, asked for on every request: the
    roots are fixed for the run, the workspace exists only once a tool made it."""
    roots = {
        str(Path(root).resolve()): f"<skills-root-{i}>" for i, root in enumerate(repository.roots)
    }
    roots.update({str(Path(root)): f"<skills-root-{i}>" for i, root in enumerate(repository.roots)})

    def current() -> dict[str, str]:
        workspace = session.workspace
        if workspace is None:
            return roots
        return {**roots, str(workspace.path): "<workspace>"}

    return current
