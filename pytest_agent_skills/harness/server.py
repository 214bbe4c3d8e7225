"""A loopback OpenAI-compatible server: the standard library's HTTP/1.1 server, kept-alive
connections, a thread per connection.

It answers ``POST /v1/chat/completions`` from a *backend* (scripted turns,
cassette replay, or a recording proxy to an upstream endpoint), as a
``chat.completion`` JSON body or, when the request asks for ``stream``, as
server-sent events of ``chat.completion.chunk`` objects ending in
``data: [DONE]``.  A backend exception becomes an HTTP 500 for the client and
is kept, so the harness re-raises the real failure (script exhausted,
cassette miss) instead of a generic API error.

The harness's own ``openai`` clients are answered in their thread, with no connection
(:mod:`.in_process` calls :meth:`LoopbackServer.answer`); the socket serves every other client
(a stand-in upstream in tests and benchmarks, a client given the server's ``base_url``).  It is
opened when its address is first asked (:attr:`LoopbackServer.origin`): a process whose clients
are all answered in process never listens, nor runs the accepting thread.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from .errors import HarnessError
from .turns import completion_body, completion_events

_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]+")
#: Set by the server from the answer itself, never copied from a backend's headers.
FRAMING_HEADERS = frozenset({"content-type", "content-length", "transfer-encoding", "connection"})


@dataclass
class Reply:
    """A backend's answer: a completion body, or an error status with a body."""

    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class Backend(Protocol):
    """Answers the requests of one mount; ``body`` is the request as ``json.loads`` reads it."""

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply: ...


@dataclass(frozen=True)
class HttpAnswer:
    """What goes back on the wire for one request."""

    status: int
    content_type: str
    payload: bytes
    headers: dict[str, str] = field(default_factory=dict)


class LoopbackServer:
    """Serve backends on ``127.0.0.1`` on a free port (opened when :attr:`origin` is first
    asked) until :meth:`stop`; :meth:`answer` serves them without a connection.

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
        self._host = host
        self._http: _HttpServer | None = None
        self._address: tuple[str, int] | None = None
        self._listen_lock = threading.Lock()
        self._stopping = False

    @property
    def listening(self) -> bool:
        """Whether the socket is open (someone asked for the server's address)."""
        return self._address is not None

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``; the socket is opened, and its accepting thread
        started, on the first call."""
        host, port = self._address or self._listen()
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def _listen(self) -> tuple[str, int]:
        with self._listen_lock:
            if self._stopping:
                raise HarnessError(
                    "the loopback server was stopped before it listened: it has no address;"
                    " ask for its base_url before stop()"
                )
            if self._address is None:
                http = _HttpServer((self._host, 0), _Handler)
                http.loopback = self
                threading.Thread(
                    # How often the accepting thread looks whether stop() was asked: the
                    # longest wait of a stop().
                    target=http.serve_forever,
                    args=(0.05,),
                    name="agent-skills-loopback",
                    daemon=True,
                ).start()
                self._http = http
                host, port = http.server_address[:2]
                self._address = (str(host), int(port))
            return self._address

    def mount(self, backend: Backend) -> str:
        """Serve ``backend`` under a new prefix; returns the mount key."""
        key = f"/m/{next(self._mounted)}"
        self.backends[key] = backend
        return key

    def unmount(self, key: str) -> None:
        self.backends.pop(key, None)
        self.errors.pop(key, None)

    def stop(self) -> None:
        with self._listen_lock:
            if self._stopping:
                return
            self._stopping = True
        http = self._http
        if http is None:  # never listened
            return
        http.shutdown()
        http.server_close()
        for connection in list(http.connections):
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

    def answer(self, method: str, target: str, headers: dict[str, str], data: bytes) -> HttpAnswer:
        """What one request gets: its route's backend's reply (a backend's exception kept for
        :meth:`raise_error`, answered HTTP 500), or a 404 off the route; what the connection
        threads send for each request they read (:mod:`.in_process` asks without one)."""
        path = target.split("?", 1)[0]
        key, _, rest = path.rpartition("/v1/")
        if method != "POST" or rest.rstrip("/") != "chat/completions":
            message = {"error": {"message": f"no route {method} {path}"}}
            return HttpAnswer(404, "application/json", json.dumps(message).encode())
        self.requests += 1
        body: dict[str, Any] = {}
        backend = self.backends.get(key)
        try:
            body = json.loads(data) if data else {}
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


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's backlog of 5 refused clients that connect at the same moment (eval runs
    # in parallel, each with its own client): they got "Connection error".
    request_queue_size = socket.SOMAXCONN
    loopback: LoopbackServer

    def __init__(self, address: tuple[str, int], handler: type[_Handler]) -> None:
        super().__init__(address, handler)
        #: Open client connections, shut by :meth:`LoopbackServer.stop`.
        self.connections: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        self.loopback.connections_opened += 1
        super().process_request(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps connections alive: every answer has its length
    # An answer's body may wait for the client's delayed acknowledgement of its head.
    disable_nagle_algorithm = True
    server: _HttpServer

    def finish(self) -> None:
        self.server.connections.discard(self.connection)
        super().finish()

    def do_POST(self) -> None:
        data = self._body()
        if data is not None:
            self._send(self.server.loopback.answer("POST", self.path, dict(self.headers), data))

    def do_GET(self) -> None:
        self._send(self.server.loopback.answer("GET", self.path, dict(self.headers), b""))

    def _body(self) -> bytes | None:
        """The request's body; None once a request that cannot be read was answered."""
        coding = self.headers.get("Transfer-Encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                self.send_error(501, f"unsupported Transfer-Encoding {coding[:100]!r}")
                return None
            return self._chunked()
        length = self.headers.get("Content-Length", "0")
        if not (length.isascii() and length.isdigit()):  # "²" is a digit to str.isdigit
            self.send_error(400, f"bad Content-Length {length[:100]!r}")
            return None
        return self.rfile.read(int(length))

    def _chunked(self) -> bytes | None:
        parts: list[bytes] = []
        while True:
            size = self.rfile.readline(65537).split(b";", 1)[0].strip()
            # Hex digits only: int() would also take "-1", "0x10", "+5" and "1_0".
            if not _CHUNK_SIZE.fullmatch(size):
                self.send_error(400, f"bad chunk size {size[:100]!r}")
                return None
            count = int(size, 16)
            if count == 0:
                while self.rfile.readline(65537).strip():  # trailers, up to the blank line
                    pass
                return b"".join(parts)
            parts.append(self.rfile.read(count))
            if self.rfile.read(2) != b"\r\n":
                self.send_error(400, "a chunk not followed by CRLF")
                return None

    def _send(self, answer: HttpAnswer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.payload)))
        for name, value in answer.headers.items():
            if name.lower() not in FRAMING_HEADERS:
                self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(answer.payload)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """An error of the request itself, answered as the API words errors, and the
        connection closed (what follows a request that cannot be read cannot be trusted)."""
        self.close_connection = True
        payload = json.dumps({"error": {"message": message or ""}}).encode()
        self._send(HttpAnswer(code, "application/json", payload))

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged: the harness keeps what a test needs."""


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
