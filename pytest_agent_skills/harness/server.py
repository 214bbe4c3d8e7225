"""A loopback OpenAI-compatible server: werkzeug's WSGI server in a thread.

It answers ``POST /v1/chat/completions`` from a *backend* (scripted turns,
cassette replay, or a recording proxy to an upstream endpoint), as a
``chat.completion`` JSON body or, when the request asks for ``stream``, as
server-sent events of ``chat.completion.chunk`` objects ending in
``data: [DONE]``.  A backend exception becomes an HTTP 500 for the client and
is kept, so the harness re-raises the real failure (script exhausted,
cassette miss) instead of a generic API error.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from .turns import completion_chunks


@dataclass
class Reply:
    """A backend's answer: a completion body, or an error status with a body."""

    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class Backend(Protocol):
    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply: ...


class LoopbackServer:
    """Serve backends on ``127.0.0.1`` on a free port until :meth:`stop`.

    The backend given to the constructor answers under ``/v1``; :meth:`mount`
    adds more under ``/m/<n>/v1``, so that one server (see :func:`shared_server`)
    serves every run of a process without a start and a stop per run.
    """

    def __init__(self, backend: Backend | None = None, *, host: str = "127.0.0.1") -> None:
        from werkzeug.serving import WSGIRequestHandler, make_server

        class KeepAliveHandler(WSGIRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes: without this, Nagle's
                # algorithm holds the body back until the client acknowledges the headers.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_request(self, *args: Any, **kwargs: Any) -> None:
                return None

        self.backends: dict[str, Backend | None] = {"": backend}
        self.errors: dict[str, BaseException] = {}
        self.requests = 0
        self._mounted = itertools.count(1)
        self._server = make_server(
            host, 0, self._app, threaded=True, request_handler=KeepAliveHandler
        )
        self._thread = threading.Thread(
            target=self._serve, name="agent-skills-loopback", daemon=True
        )
        self._thread.start()

    def _serve(self) -> None:
        self._server.serve_forever(poll_interval=0.05)

    @property
    def origin(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

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
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def raise_error(self, key: str = "") -> None:
        """Re-raise (once) the exception a backend raised while answering."""
        error = self.errors.pop(key, None)
        if error is not None:
            raise error

    def _app(self, environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        from werkzeug.wrappers import Request, Response

        request = Request(environ)
        key, _, rest = request.path.rpartition("/v1/")
        if request.method != "POST" or rest.rstrip("/") != "chat/completions":
            return Response(
                json.dumps({"error": {"message": f"no route {request.method} {request.path}"}}),
                404,
                mimetype="application/json",
            )(environ, start_response)
        self.requests += 1
        try:
            body = json.loads(request.get_data(as_text=True) or "{}")
            backend = self.backends.get(key)
            if backend is None:
                raise RuntimeError(f"the loopback server has no backend at {key or '/'}")
            reply = backend.respond(body, dict(request.headers))
        except Exception as error:  # handed to the harness through raise_error()
            self.errors[key] = error
            reply = Reply({"error": {"message": str(error), "type": type(error).__name__}}, 500)
        if reply.status != 200 or not body.get("stream"):
            response = Response(
                json.dumps(reply.body), reply.status, reply.headers, mimetype="application/json"
            )
        else:
            events = (f"data: {json.dumps(chunk)}\n\n" for chunk in completion_chunks(reply.body))
            payload = "".join(events) + "data: [DONE]\n\n"
            response = Response(payload, 200, reply.headers, mimetype="text/event-stream")
        return response(environ, start_response)


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

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        from .turns import completion_body

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
