"""Run one conversation end to end: repository, session, model, loop, checks.

:func:`run_conversation` is the library entry point behind both the
``*.scenario.yaml`` items and the ``skill_agent`` fixture; it works without
pytest.  The model is chosen by the arguments: a ``script`` reached
``direct``-ly (in process), or through the real ``openai`` client and the
loopback server (``sdk``, ``sdk-stream``); or a ``cassette`` replayed (or
recorded) behind the same loopback server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..redaction import Redactor
from .cassette import DEFAULT_IGNORED_FIELDS, CassetteBackend, Matcher, Upstream
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
            on_error=lambda: self.server.raise_error(self.key),
        )

    def complete(self, request: dict[str, Any]) -> Any:
        return self.client.complete(request)

    def finish(self) -> None:
        self.backend.finish()

    def close(self) -> None:
        self.server.unmount(self.key)


def run_conversation(
    repository: Any,
    user: str,
    *,
    script: Sequence[Any] | Callable[[dict[str, Any], int], Any] | None = None,
    cassette: Path | str | None = None,
    options: ModelOptions | None = None,
    transport: str | None = None,
    tools: Mapping[str, Mapping[str, Any]] | None = None,
    dynamic_tools: bool = False,
    inputs: Mapping[str, str | bytes] | None = None,
    env: Mapping[str, str] | None = None,
    runtime: Any = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    allow_unused: bool = False,
    model_name: str | None = None,
    match_ignore: Sequence[str] = (),
) -> RunOutcome:
    """One conversation; raises a :class:`HarnessError` carrying ``.trajectory`` on failure."""
    from ..protocol import SkillSession, ToolPool

    options = options or ModelOptions()
    if (script is None) == (cassette is None):
        raise HarnessError("give exactly one of script=... or cassette=...")
    transport = transport or options.transport
    if transport not in TRANSPORTS:
        raise HarnessError(f"unknown transport {transport!r} (choose from {', '.join(TRANSPORTS)})")
    pool = ToolPool()
    for name, spec in (tools or {}).items():
        parameters = spec.get("parameters") or {"type": "object", "properties": {}}
        pool.stub(name, spec.get("description", ""), dict(parameters), spec.get("returns"))
    session = SkillSession(
        repository,
        runtime=runtime,
        tool_pool=pool,
        dynamic_tools=dynamic_tools,
        inputs=inputs,
        env=env,
    )
    name = model_name or options.model_name
    use: CassetteUse | None = None
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(session.close)
            if script is not None:
                model = _scripted(script, transport, name, allow_unused, stack)
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
            trajectory = AgentLoop(session, model, model_name=name, max_turns=max_turns).run(user)
    except HarnessError as error:
        error.cassette_use = use
        raise
    return RunOutcome(trajectory, repository, use)


def _scripted(
    script: Any, transport: str, name: str, allow_unused: bool, stack: contextlib.ExitStack
) -> ChatModel:
    scripted = ScriptedModel(script, allow_unused=allow_unused)
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
