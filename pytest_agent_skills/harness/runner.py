"""Run one conversation end to end: repository, session, model, loop, checks.

:func:`run_conversation` is the library entry point behind both the
``*.scenario.yaml`` items and the ``skill_agent`` fixture; it works without
pytest.  It takes the two halves of a run whole: the :class:`~.conversation.Conversation`
(what to run) and the :class:`~.run_settings.RunSettings` (how, for every run of a
session).  The model is chosen by the conversation: a ``script`` reached ``direct``-ly (in
process), or through the real ``openai`` client and the loopback server (``sdk``,
``sdk-stream``); or a ``cassette`` replayed (or recorded) behind the same loopback server.
The loopback server answers the client in the client's thread (:mod:`.in_process`): the
client's own code builds, sends and reads every request, with no connection to wait on.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cassette import DEFAULT_IGNORED_FIELDS, CassetteBackend, Matcher
from .conversation import Conversation
from .errors import HarnessError
from .in_process import IN_PROCESS_ORIGIN, in_process_http_client
from .loop import AgentLoop
from .models import ChatModel, OpenAIClientModel, ScriptedModel
from .outcome import CassetteUse, RunOutcome
from .run_settings import TRANSPORTS, RunSettings
from .server import LoopbackServer, ScriptedBackend, shared_server

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..protocol import SkillSession
    from ..repository import SkillRepository
    from .conversation import ConversationFields


class ServedModel:
    """The ``openai`` client talking to the loopback server, which serves ``backend``: the
    server answers the client in the client's own thread, with no connection (see
    :mod:`.in_process`), or with ``in_process=False`` through a connection of its socket.
    ``server``: another than the process's shared one."""

    def __init__(
        self,
        backend: Any,
        *,
        model_name: str,
        stream: bool,
        in_process: bool = True,
        server: LoopbackServer | None = None,
    ) -> None:
        self.backend = backend
        self.server = server or shared_server()
        self.key = self.server.mount(backend)
        origin = IN_PROCESS_ORIGIN if in_process else self.server.origin
        self.client = OpenAIClientModel.connect(
            origin + self.key + "/v1",
            model=model_name,
            stream=stream,
            # Not a lambda over self: that cycle left each conversation's client to the GC.
            on_error=functools.partial(self.server.raise_error, self.key),
            timeout=getattr(backend, "answer_timeout", None),  # a recording may take longer
            http_client=in_process_http_client(self.server) if in_process else None,
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
    conversation: Conversation | SkillRepository,
    user: str | None = None,
    *,
    settings: RunSettings | None = None,
    **fields: Unpack[ConversationFields],
) -> RunOutcome:
    """Run ``conversation`` with ``settings`` (default :class:`RunSettings()`); raises a
    :class:`HarnessError` carrying ``.trajectory`` (and ``.cassette_use``) on failure, an
    :class:`~.expect.ExpectationError` listing every unmet expectation.

    ``run_conversation(repository, user, **fields)`` is
    ``run_conversation(Conversation(repository, user, **fields))``.
    """
    if not isinstance(conversation, Conversation):
        conversation = Conversation(conversation, user, **fields)
    elif user is not None or fields:
        raise HarnessError(
            "run_conversation(conversation) takes the conversation whole: make a variant with"
            " dataclasses.replace(conversation, ...) instead of passing its fields beside it"
        )
    settings = settings or RunSettings()
    transport = conversation.transport or settings.transport
    if transport not in TRANSPORTS:
        raise HarnessError(f"unknown transport {transport!r} (choose from {', '.join(TRANSPORTS)})")
    session = _session(conversation, settings)
    name = conversation.model_name or settings.model_name
    use: CassetteUse | None = None
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(session.close)
            scripts = conversation.turn_scripts
            if scripts is not None:
                scripted = ScriptedModel.per_user_turn(
                    scripts, allow_unused=conversation.allow_unused
                )
                model = _scripted(scripted, transport, name, stack)
            elif conversation.script is not None:
                scripted = ScriptedModel(
                    conversation.script, allow_unused=conversation.allow_unused
                )
                model = _scripted(scripted, transport, name, stack)
            else:
                backend = _cassette_backend(conversation, settings, session)
                use = CassetteUse(backend.path, backend.mode)
                model = _served(backend, name, transport, stack)
                stack.callback(_count, use, backend)
            trajectory = agent_loop(session, model, conversation, settings).run(
                conversation.user_turns
            )
        _check(conversation, trajectory)
    except HarnessError as error:
        error.cassette_use = use
        raise
    return RunOutcome(trajectory, conversation.repository, use)


def agent_loop(
    session: SkillSession, model: ChatModel, conversation: Conversation, settings: RunSettings
) -> AgentLoop:
    """The loop of ``conversation`` between ``session`` and ``model``: the model name and turn
    limit of the conversation, the request parameters of the settings."""
    return AgentLoop(
        session,
        model,
        model_name=conversation.model_name or settings.model_name,
        max_turns=conversation.max_turns,
        request_params=settings.model_params,
    )


def _session(conversation: Conversation, settings: RunSettings) -> SkillSession:
    from ..protocol import SessionConfigError, SkillSession, ToolPool

    pool = ToolPool()
    for name, spec in conversation.tools.items():
        parameters = spec.get("parameters") or {"type": "object", "properties": {}}
        pool.stub(name, spec.get("description", ""), dict(parameters), spec.get("returns"))
    try:
        return SkillSession(
            conversation.repository,
            runtime=settings.runtime,
            tool_pool=pool,
            dynamic_tools=conversation.dynamic_tools,
            exec_tools=conversation.exec_tools,
            inputs=conversation.inputs,
            env=conversation.env,
            load_mode=conversation.load_mode or settings.load_mode,
        )
    except SessionConfigError as error:
        raise HarnessError(str(error)) from None


def _cassette_backend(
    conversation: Conversation, settings: RunSettings, session: SkillSession
) -> CassetteBackend:
    assert conversation.cassette is not None  # no script: Conversation checked there is one
    return CassetteBackend(
        Path(conversation.cassette),
        mode=settings.record_mode,
        upstream=settings.upstream,
        matcher=Matcher(
            ignored_fields=DEFAULT_IGNORED_FIELDS
            | set(settings.match_ignore)
            | set(conversation.match_ignore),
            substitutions=_machine_paths(conversation.repository, session),
        ),
        redactor=settings.redactor(),
        allow_unused=conversation.allow_unused,
    )


def _check(conversation: Conversation, trajectory: Any) -> None:
    """The conversation's and its turns' ``expect``, checked once it ended."""
    turn_expects = [turn.expect for turn in conversation.user_turns]
    if conversation.expect is None and all(check is None for check in turn_expects):
        return
    from .expect import assert_trajectory

    assert_trajectory(
        trajectory,
        conversation.expect or {},
        turns=turn_expects,
        where=conversation.where,
        title=conversation.title,
    )


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
