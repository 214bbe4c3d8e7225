"""The chat-completions seam: every model the agent loop can talk to.

A model is anything with ``complete(request) -> ModelTurn`` and
``finish()``: ``request`` is the keyword arguments of
``client.chat.completions.create`` (``model``, ``messages``, ``tools``), and
``finish()`` runs the end-of-conversation checks (unused script turns,
unplayed cassette interactions).
"""

from __future__ import annotations

import functools
import json
import threading
import typing
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .errors import ModelError, ScriptExhaustedError, UnusedTurnsError
from .turns import (
    ModelTurn,
    ScriptedTurn,
    ScriptFunction,
    body_from_chunks,
    completion_problem,
    scripted_turn,
    turn_from_message,
)


class ChatModel(Protocol):
    def complete(self, request: dict[str, Any]) -> ModelTurn: ...

    def finish(self) -> None: ...


class ScriptedModel:
    """Answers from a list of scripted turns, or from a callable.

    A callable receives the request (the chat-completions keyword arguments)
    and the turn index, and returns a turn in any form :func:`scripted_turn`
    accepts, or a :class:`ModelTurn`; returning ``None`` means the script has
    no answer, which fails like a list that ran out.

    :meth:`per_user_turn` builds one from a script per user turn: each user turn
    then answers from its own script only, and must use it up.
    """

    def __init__(
        self, script: Sequence[Any] | ScriptFunction, *, allow_unused: bool = False
    ) -> None:
        self.function: ScriptFunction | None = script if callable(script) else None
        self.turns: list[ScriptedTurn] = (
            [] if callable(script) else [scripted_turn(t) for t in script]
        )
        self.allow_unused = allow_unused
        self.used = 0
        #: (start, end) of each user turn's script in :attr:`turns`, when there is one each.
        self.segments: list[tuple[int, int]] | None = None
        self.user_turn: int | None = None

    @classmethod
    def per_user_turn(
        cls, scripts: Sequence[Sequence[Any]], *, allow_unused: bool = False
    ) -> ScriptedModel:
        model = cls([turn for script in scripts for turn in script], allow_unused=allow_unused)
        model.segments = []
        start = 0
        for script in scripts:
            model.segments.append((start, start + len(script)))
            start += len(script)
        return model

    def begin_user_turn(self, index: int) -> None:
        """A new user message: with a script per user turn, the previous one must be used up."""
        if self.segments is None:
            return
        if self.user_turn is not None:
            self._check_used_up()
        self.user_turn = index
        self.used = self.segments[index][0]

    def complete(self, request: dict[str, Any]) -> ModelTurn:
        index = self.used
        if self.function is not None:
            answer = self.function(request, index)
            if answer is None:
                raise ScriptExhaustedError(
                    f"the script function returned None for model turn {index}: the conversation"
                    " has no final text turn. Return {'say': ...} to end it."
                )
            self.used += 1
            if isinstance(answer, ModelTurn):
                return answer
            try:
                return scripted_turn(answer, f"script function, turn {index}").to_model_turn(index)
            except (TypeError, KeyError) as error:
                raise ModelError(f"script function, turn {index}: {error}") from None
        start, end = self._segment()
        if index >= end:
            last = self.turns[end - 1].describe() if end > start else "(the script is empty)"
            if self.user_turn is None:
                raise ScriptExhaustedError(
                    f"script exhausted: the model was asked for turn {index} but the script has"
                    f" only {end} turn(s); the last one was: {last}. End the script with a"
                    " final turn {say: ...} or add the missing turns."
                )
            raise ScriptExhaustedError(
                f"script exhausted: turns[{self.user_turn}] asked the model for its turn"
                f" {index - start} but its script has only {end - start} turn(s); the last one"
                f" was: {last}. End the turn's script with a final turn {{say: ...}} or add the"
                " missing turns."
            )
        self.used += 1
        return self.turns[index].to_model_turn(index)

    def _segment(self) -> tuple[int, int]:
        if self.segments is None or self.user_turn is None:
            return 0, len(self.turns)
        return self.segments[self.user_turn]

    def _check_used_up(self) -> None:
        start, end = self._segment()
        if self.allow_unused or self.used >= end:
            return
        left = "\n".join(
            f"  turn {i - start}: {self.turns[i].describe()}" for i in range(self.used, end)
        )
        if self.user_turn is None:
            raise UnusedTurnsError(
                f"unused turns: the conversation ended after turn {self.used - 1} but the script"
                f" has {end - self.used} more:\n{left}\nRemove them, or find out why the"
                " conversation ended early (a final text turn ends it)."
            )
        raise UnusedTurnsError(
            f"unused turns: turns[{self.user_turn}] ended after its turn {self.used - 1 - start}"
            f" but its script has {end - self.used} more:\n{left}\nRemove them, or find out"
            " why the turn ended early (a final text turn ends it)."
        )

    def finish(self) -> None:
        if self.function is None:
            self._check_used_up()


class OpenAIClientModel:
    """The real ``openai`` client against any OpenAI-compatible ``base_url``."""

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        stream: bool = False,
        on_error: Callable[[], None] | None = None,
    ):
        build_response_models()
        self.client = client
        self.model = model
        self.stream = stream
        #: Called when the endpoint answers an error, so a loopback server can re-raise
        #: the exception behind it (a script or cassette failure) instead of an HTTP 500.
        self.on_error = on_error

    @classmethod
    def connect(
        cls,
        base_url: str,
        *,
        model: str,
        stream: bool = False,
        api_key: str = "unused",
        on_error: Callable[[], None] | None = None,
        timeout: float | None = None,
        http_client: Any = None,
    ) -> OpenAIClientModel:
        """A client for a loopback server (plain HTTP: no TLS context to build), waiting
        ``timeout`` seconds (default 60) for an answer; through ``http_client`` (default: one
        shared by every loopback client of the process)."""
        import openai

        client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key,
            max_retries=0,
            timeout=60.0 if timeout is None else timeout,
            http_client=http_client or _loopback_http_client(),
        )
        return cls(client, model=model, stream=stream, on_error=on_error)

    def complete(self, request: dict[str, Any]) -> ModelTurn:
        import openai

        sent = {**request, "model": self.model}
        failure: openai.APIError | None = None
        try:
            if self.stream:
                body = body_from_chunks(self._streamed_chunks(_create_kwargs(sent)))
            else:
                body = self._posted(sent)
        except openai.APIError as error:
            failure = error
        if failure is not None:
            # Outside the except block: the backend's own error (a cassette miss, an exhausted
            # script) is raised as itself, not chained under the client's HTTP 500.
            if self.on_error is not None:
                self.on_error()
            raise ModelError(f"the model endpoint answered an error: {failure}") from failure
        problem = completion_problem(body)
        if problem is not None:
            raise ModelError(f"the model endpoint answered {problem}: {json.dumps(body)[:500]}")
        return turn_from_message(
            body["choices"][0]["message"], f"{self.client.base_url} {body.get('id', '')}"
        )

    def _posted(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``request`` posted as it is by the client's own ``post``: the body
        ``create`` would send (a field ``create`` does not name goes as it is too), without
        ``create``'s walk of every message and tool schema against its parameter types,
        which changes nothing in a JSON request and was the largest part of a request's
        cost."""
        from openai.types.chat import ChatCompletion

        answer = self.client.post("/chat/completions", body=request, cast_to=ChatCompletion)
        return dict(answer.model_dump(exclude_unset=True))

    def _streamed_chunks(self, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        """The chunks of a streamed completion, its events read whole before they are parsed.

        The client's event stream stops reading at ``data: [DONE]``, before the end of the
        HTTP message, so closing it closed the connection too: a new TCP connection for
        every streamed request.  Read to its end, the response gives its connection back
        to the pool (the answer is gathered whole anyway).
        """
        raw = self.client.chat.completions.with_raw_response.create(**kwargs, stream=True)
        raw.http_response.read()
        return [chunk.model_dump(exclude_unset=True) for chunk in raw.parse()]

    def finish(self) -> None:
        return None


_BUILDING = threading.Lock()
_BUILT: set[int] = set()


def build_response_models() -> None:
    """Build the ``openai`` client's answer models now, once per process, before a client
    can read an answer.

    The client defers building its pydantic models to their first use, and pydantic's lazy
    build is not thread-safe: while one thread builds a model, another sees the base
    class's placeholder and fails with "BaseModel cannot be instantiated directly"
    (openai-python #3079). Eval runs read answers on several threads at once, and about 1 run
    in 400 failed so under load. Every thread makes its client through here, and the lock
    holds the others back until the models are whole (about 30 ms, once).

    Keyed by the ``openai`` module object, as pytester may import a fresh copy.
    """
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    with _BUILDING:
        if id(openai) in _BUILT:
            return
        seen: set[type[Any]] = set()
        todo: list[type[Any]] = [ChatCompletion, ChatCompletionChunk]
        while todo:
            model = todo.pop()
            if model in seen:
                continue
            seen.add(model)
            if not model.__pydantic_complete__:
                model.model_rebuild()
            for field in model.model_fields.values():
                todo.extend(_models_in(field.annotation))
        _BUILT.add(id(openai))


def _models_in(annotation: Any) -> list[type[Any]]:
    """The pydantic models ``annotation`` names, at any depth (``list[X] | None``...)."""
    import pydantic

    found: list[type[Any]] = []
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        found.append(annotation)
    for argument in typing.get_args(annotation):
        found += _models_in(argument)
    return found


_HTTP_CLIENTS: dict[int, Any] = {}


def _loopback_http_client() -> Any:
    """One HTTP client per process for every loopback server (building one loads the
    certificate bundle, which plain-HTTP loopback never uses).

    Keyed by the ``openai`` module object: pytester may import a fresh copy, whose
    client class the cached instance would not satisfy.
    """
    import openai

    client = _HTTP_CLIENTS.get(id(openai))
    if client is None:
        client = _HTTP_CLIENTS[id(openai)] = openai.DefaultHttpxClient(verify=False)
    return client


@functools.lru_cache(maxsize=1)
def _create_parameters() -> frozenset[str]:
    """The keyword arguments the ``openai`` client's ``chat.completions.create`` takes."""
    import inspect

    from openai.resources.chat.completions import Completions

    return frozenset(inspect.signature(Completions.create).parameters) - {"self"}


def _create_kwargs(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as ``create``'s keyword arguments: a field the client does not name (a
    server's own parameter, such as llama.cpp's ``top_k``) goes in ``extra_body``, which the
    client sends as it is."""
    known = _create_parameters()
    extra = {name: value for name, value in request.items() if name not in known}
    if not extra:
        return request
    kwargs = {name: value for name, value in request.items() if name in known}
    kwargs["extra_body"] = extra
    return kwargs
