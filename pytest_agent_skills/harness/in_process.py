"""The ``openai`` client answered by the loopback server in the client's own thread.

The client builds, sends and reads every request through its own code (its HTTP client, its
parsing of the answer, its errors); only the transport under its HTTP client is another
(httpx's extension point for it), which hands each request to :meth:`LoopbackServer.answer`,
what the server's connection threads call, and turns the answer into the client's response.
The client's timeout bounds no answer then (a recording is bounded by the upstream's total
timeout, a replay answers at once).  No connection and no server thread on the way, so the
harness adds little to what the client itself costs.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any

from .server import FRAMING_HEADERS

if TYPE_CHECKING:
    from .server import LoopbackServer

#: The origin of the clients answered in process: no address is ever connected to (the
#: transport hands every request to the server), so the server need not listen.
IN_PROCESS_ORIGIN = "http://in-process.invalid"

_CLIENTS: dict[tuple[int, int], Any] = {}
_LOCK = threading.Lock()


def in_process_http_client(server: LoopbackServer) -> Any:
    """The HTTP client (one per process and server) of ``openai`` clients that ``server``
    answers in their thread: an ``httpx.Client``, which the ``openai`` client takes as its
    ``http_client``.

    Keyed by the ``httpx`` module object too: pytester may import a fresh copy, whose
    client class a cached instance would not be.
    """
    import httpx

    key = (id(httpx), id(server))
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            transport = _transport_class(httpx)(server)
            client = _CLIENTS[key] = httpx.Client(transport=transport)
    return client


@functools.cache
def _transport_class(httpx: Any) -> Any:
    """The transport class of an ``httpx`` module."""

    class InProcessTransport(httpx.BaseTransport):  # type: ignore[misc]
        def __init__(self, server: LoopbackServer) -> None:
            # The server lives as long as the cached client: its id stays its own.
            self.server = server

        def handle_request(self, request: Any) -> Any:
            sent = {
                name.decode("latin-1"): value.decode("latin-1")
                for name, value in request.headers.raw
            }
            target = request.url.raw_path.decode("ascii")
            answer = self.server.answer(request.method, target, sent, request.read())
            headers = [("Content-Type", answer.content_type)] + [
                (name, value)
                for name, value in answer.headers.items()
                if name.lower() not in FRAMING_HEADERS
            ]
            return httpx.Response(
                answer.status, headers=headers, content=answer.payload, request=request
            )

    return InProcessTransport
