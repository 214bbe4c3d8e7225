"""The ``openai`` client answered by the loopback server in the client's own thread.

The client builds, sends and reads every request through its own code (its HTTP client, its
parsing of the answer, its errors); only the transport under its HTTP client is another
(httpx's extension point for it), which hands each request to :meth:`LoopbackServer.answer`,
what the server's connection threads call, and turns the answer into the client's response.
The client's timeout bounds no answer then (a recording is bounded by the upstream's total
timeout, a replay answers at once).  No connection and no server thread on the way:
recording an eval's requests one after the other, the harness's time over the raw client's
went 3.4 -> 2.2 ms a request, and 20 runs 8 at once 1.59 -> 1.52 s (bench/evals.py, medians
of 3, 2-core machine).
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any

from .http11 import FRAMING_HEADERS

if TYPE_CHECKING:
    from .server import LoopbackServer

_CLIENTS: dict[tuple[int, int], Any] = {}
_LOCK = threading.Lock()


def in_process_http_client(server: LoopbackServer) -> Any:
    """The HTTP client (one per process and server) of ``openai`` clients that ``server``
    answers in their thread.

    Keyed by the ``openai`` module object too: pytester may import a fresh copy, whose
    client class the cached instance would not satisfy.
    """
    import httpx2
    import openai

    key = (id(openai), id(server))
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            transport = _transport_class(httpx2)(server)
            client = _CLIENTS[key] = openai.DefaultHttpxClient(transport=transport)
    return client


@functools.cache
def _transport_class(httpx2: Any) -> Any:
    """The transport class of the ``httpx2`` module the ``openai`` client uses."""

    class InProcessTransport(httpx2.BaseTransport):  # type: ignore[misc]
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
            return httpx2.Response(
                answer.status, headers=headers, content=answer.payload, request=request
            )

    return InProcessTransport
