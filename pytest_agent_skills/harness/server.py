"""A loopback OpenAI-compatible server: HTTP/1.1 with keep-alive, a thread per connection.

It answers ``POST /v1/chat/completions`` from a *backend* (scripted turns,
cassette replay, or a recording proxy to an upstream endpoint), as a
``chat.completion`` JSON body or, when the request asks for ``stream``, as
server-sent events of ``chat.completion.chunk`` objects ending in
``data: [DONE]``.  A backend exception becomes an HTTP 500 for the client and
is kept, so the harness re-raises the real failure (script exhausted,
cassette miss) instead of a generic API error.

Connections are kept alive (every answer has a ``Content-Length``), so a
conversation's requests share one TCP connection of the client's pool: a new
connection per request cost more than the rest of the server's work.  The wire
format is read and written by :mod:`.http11` (why not ``http.server``: see there).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import jiter

from .http11 import BadRequest, RequestReader, answer_bytes
from .turns import completion_body, completion_events


@dataclass
class Reply:
    """A backend's answer: a completion body, or an error status with a body."""

    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class Backend(Protocol):
    """Answers the requests of one mount.

    ``body`` is the request as ``json.loads`` reads it, unless the backend has a false
    ``reads_request`` attribute: then it holds only the fields the server answers from
    (``model``, ``stream``), the rest of the request being read but not built.
    """

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply: ...


@dataclass(frozen=True)
class HttpAnswer:
    """What goes back on the wire for one request."""

    status: int
    content_type: str
    payload: bytes
    headers: dict[str, str] = field(default_factory=dict)


class LoopbackServer:
    """Serve backends on ``127.0.0.1`` on a free port until :meth:`stop`.

    The backend given to the constructor answers under ``/v1``; :meth:`mount`
    adds more under ``/m/<n>/v1``, so that one server (see :func:`shared_server`)
    serves every run of a process without a start and a stop per run.
    """

    def __init__(self, backend: Backend | None = None, *, host: str = "127.0.0.1") -> None:
        self.backends: dict[str, Backend | None] = {"": backend}
        self.errors: dict[str, BaseException] = {}
        self.requests = 0
        #: TCP connections accepted so far (kept alive, one serves many requests).
        self.connections_opened = 0
        self._mounted = itertools.count(1)
        self._listener = socket.create_server((host, 0))
        self._address: tuple[str, int] = self._listener.getsockname()[:2]
        #: Open client connections, closed by :meth:`stop`.
        self._connections: set[socket.socket] = set()
        self._stopping = False
        self._thread = threading.Thread(
            target=self._accept, name="agent-skills-loopback", daemon=True
        )
        self._thread.start()

    @property
    def origin(self) -> str:
        host, port = self._address
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def mount(self, backend: Backend) -> str:
        """Serve ``backend`` under a new prefix; returns the mount key."""
        key = f"/m/{next(self._mounted)}"
        self.backends[key] = backend
        return key

    def unmount(self, key: str) -> None:
        self.backends.pop(key, None)
        self.errors.pop(key, None)

    def stop(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        # A blocked accept() does not notice its socket closing: wake it with a connection.
        with contextlib.suppress(OSError):
            socket.create_connection(self._address, timeout=5).close()
        self._thread.join(timeout=5)
        self._listener.close()
        for connection in list(self._connections):
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)  # ends the thread blocked on it

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def raise_error(self, key: str = "") -> None:
        """Re-raise (once) the exception a backend raised while answering."""
        error = self.errors.pop(key, None)
        if error is not None:
            raise error

    def _accept(self) -> None:
        while True:
            connection, _ = self._listener.accept()
            if self._stopping:
                connection.close()
                return
            # An answer is one write, but the previous one may still wait for the client's
            # delayed acknowledgement: without this, Nagle's algorithm would hold it back.
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connections.add(connection)
            self.connections_opened += 1
            threading.Thread(
                target=self._serve, args=(connection,), name="agent-skills-loopback", daemon=True
            ).start()

    def _serve(self, connection: socket.socket) -> None:
        reader = RequestReader(connection)
        try:
            while True:
                try:
                    request = reader.next_request()
                except BadRequest as error:
                    message = json.dumps({"error": {"message": str(error)}}).encode()
                    connection.sendall(
                        answer_bytes(error.status, "application/json", message, close=True)
                    )
                    return
                if request is None:
                    return
                answer = self._answer(
                    request.method, request.target, request.headers, request.body
                )
                connection.sendall(
                    answer_bytes(
                        answer.status,
                        answer.content_type,
                        answer.payload,
                        answer.headers,
                        close=not request.keep_alive,
                    )
                )
                if not request.keep_alive:
                    return
        except OSError:  # the client went away, or stop() shut the connection
            return
        finally:
            self._connections.discard(connection)
            connection.close()

    def answer(self, method: str, target: str, headers: dict[str, str], data: bytes) -> HttpAnswer:
        """What one request gets: its route's backend's reply (a backend's exception kept for
        :meth:`raise_error`, answered HTTP 500), or a 404 off the route; what the connection
        threads send for each request they read (:mod:`.in_process` asks without one)."""
        return self._answer(method, target, headers, data)

    def _answer(
        self, method: str, target: str, headers: dict[str, str], data: bytes
    ) -> HttpAnswer:
        path = target.split("?", 1)[0]
        key, _, rest = path.rpartition("/v1/")
        if method != "POST" or rest.rstrip("/") != "chat/completions":
            message = {"error": {"message": f"no route {method} {path}"}}
            return HttpAnswer(404, "application/json", json.dumps(message).encode())
        self.requests += 1
        body: dict[str, Any] = {}
        backend = self.backends.get(key)
        try:
            body = (
                request_json(data)
                if getattr(backend, "reads_request", True)
                else answered_fields(data)
            )
            if backend is None:
                raise RuntimeError(f"the loopback server has no backend at {key or '/'}")
            reply = backend.respond(body, headers)
        except Exception as error:  # handed to the harness through raise_error()
            self.errors[key] = error
            reply = Reply({"error": {"message": str(error), "type": type(error).__name__}}, 500)
        if reply.status != 200 or not body.get("stream"):
            payload = json.dumps(reply.body).encode()
            return HttpAnswer(reply.status, "application/json", payload, reply.headers)
        return HttpAnswer(200, "text/event-stream", completion_events(reply.body), reply.headers)


def request_json(data: bytes) -> Any:
    """A request body as ``json.loads`` reads it (an empty one is ``{}``), in half the time.

    ``jiter`` (the ``openai`` client's own parser) reads it first: what it accepts it reads
    as ``json.loads`` does.  What it refuses (invalid JSON, invalid UTF-8, but also the lone
    surrogates ``json.loads`` accepts) goes to ``json.loads``, which reads it or raises its
    own error: the result and the error are those of ``json.loads`` either way.  Parsing
    each request anew (the conversation so far) was a third of the server's time.
    """
    if not data:
        return {}
    try:
        return jiter.from_json(data, cache_mode="none")
    except ValueError:
        return json.loads(data.decode("utf-8"))


_ANSWERED_FIELDS = ("model", "stream")


def answered_fields(data: bytes) -> Any:
    """The fields of a request body the server answers from (``model``, ``stream``), read
    in a third of the time ``request_json`` takes (nothing else of the request is built).

    Read as :func:`request_json` reads them: what the reader refuses (invalid JSON, a body
    that is not an object, lone surrogates) is read whole by :func:`request_json`, which
    gives ``json.loads``'s value (not an object: whole) or error.
    """
    if not data:
        return {}
    try:
        return _answered_fields_reader().validate_json(data)
    except ValueError:  # pydantic_core.ValidationError is one
        value = request_json(data)
    if not isinstance(value, dict):
        return value
    return {name: value[name] for name in _ANSWERED_FIELDS if name in value}


@functools.cache
def _answered_fields_reader() -> Any:
    """Built at first use: importing ``pydantic_core`` costs ~40 ms, paid already by the
    ``openai`` client whenever a request reaches this server."""
    from pydantic_core import SchemaValidator, core_schema

    field = core_schema.typed_dict_field(core_schema.any_schema(), required=False)
    schema = core_schema.typed_dict_schema(
        dict.fromkeys(_ANSWERED_FIELDS, field), extra_behavior="ignore"
    )
    return SchemaValidator(schema, core_schema.CoreConfig(cache_strings=False))


_SHARED: list[LoopbackServer] = []
_SHARED_LOCK = threading.Lock()


def shared_server() -> LoopbackServer:
    """The process-wide loopback server the harness mounts its backends on."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(LoopbackServer())
        return _SHARED[0]


class ScriptedBackend:
    """Serves the turns of a model (normally a :class:`ScriptedModel`) as completions."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.count = 0

    @property
    def reads_request(self) -> bool:
        """False for a list script: its turns do not depend on the request."""
        return getattr(self.model, "function", True) is not None

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        request = {
            key: value for key, value in body.items() if key not in ("stream", "stream_options")
        }
        turn = self.model.complete(request)
        self.count += 1
        return Reply(completion_body(turn, str(body.get("model", "")), f"chatcmpl-{self.count}"))

    def begin_user_turn(self, index: int) -> None:
        self.model.begin_user_turn(index)

    def finish(self) -> None:
        self.model.finish()
