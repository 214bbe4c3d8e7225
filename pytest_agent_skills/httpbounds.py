"""Bounds on one HTTP exchange made with httpx: a total time on the clock and a cap on the body.

httpx bounds each phase of a request (connect, every read) but neither the whole exchange
nor the size of what comes back: a server that drips a byte now and then keeps every read
alive, and one that answers gigabytes is read whole.  Both HTTP clients of the project use
these bounds: the download of URL skill roots (:mod:`pytest_agent_skills.sources.download`)
and the recording of cassettes from an upstream model
(:mod:`pytest_agent_skills.harness.cassette`); each turns :class:`BodyTooLargeError` and an
expired :class:`Deadline` into its own typed error.

No httpx import at module level: the pytest glue reads the defaults at start-up.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket
    import ssl

    import httpx

MIB = 1024 * 1024
#: The default total time of one exchange, in seconds.
DEFAULT_TOTAL_TIMEOUT = 600.0
#: The largest total timeout accepted: a larger number (inf, 1e300) would overflow the clock.
MAX_TOTAL_TIMEOUT = 3600
#: The default cap on a body, in bytes.
DEFAULT_MAX_BODY_BYTES = 64 * MIB
CHUNK_BYTES = 256 * 1024


class BodyTooLargeError(Exception):
    """A body over ``limit`` bytes: as announced (``Content-Length``), or counted while read."""

    def __init__(self, limit: int, announced: int | None = None) -> None:
        self.limit = limit
        self.announced = announced
        super().__init__(self.describe("body"))

    def describe(self, limit_name: str) -> str:
        """What was over the limit, the limit called ``limit_name`` (``download``, ...)."""
        if self.announced is not None:
            return (
                f"the server announces {self.announced} bytes (Content-Length), over the"
                f" {limit_name} limit of {self.limit} bytes"
            )
        return (
            f"the body is over the {limit_name} limit of {self.limit} bytes"
            " (cut off while streaming)"
        )


class InvalidContentLengthError(Exception):
    """A ``Content-Length`` header that is not a number."""

    def __init__(self, header: str) -> None:
        super().__init__(f"the server sent an invalid Content-Length {header!r}")


def client(
    *, connect_timeout: float, read_timeout: float, headers: dict[str, str], **options: Any
) -> httpx.Client:
    """An httpx client with these per-phase timeouts, the shared TLS context, and no
    compression asked for (a compressed body could grow past the cap in one chunk)."""
    import httpx

    timeout = httpx.Timeout(
        connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
    )
    return httpx.Client(
        timeout=timeout,
        verify=ssl_context(),
        headers={**headers, "Accept-Encoding": "identity"},
        **options,
    )


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process: loading the CA bundle costs ~70 ms each time."""
    import httpx

    return httpx.create_ssl_context()


def capped_chunks(response: httpx.Response, limit: int) -> Iterator[bytes]:
    """The body of ``response``, chunk by chunk, never more than ``limit`` bytes in all.

    The cap is checked against ``Content-Length`` at once (before the body is read) and
    again on every chunk, so a server that announces less than it sends (or announces
    nothing) is cut off at the cap; raises :class:`BodyTooLargeError` or
    :class:`InvalidContentLengthError`.
    """
    header = response.headers.get("content-length")
    if header is not None:
        try:
            announced = int(header)
        except ValueError:
            raise InvalidContentLengthError(header) from None
        if announced > limit:
            raise BodyTooLargeError(limit, announced)
    return _counted(response.iter_bytes(CHUNK_BYTES), limit)


def _counted(chunks: Iterator[bytes], limit: int) -> Iterator[bytes]:
    received = 0
    for chunk in chunks:
        received += len(chunk)
        if received > limit:
            raise BodyTooLargeError(limit)
        yield chunk


class Deadline:
    """The total time of one exchange, on the clock.

    A timer shuts down the exchange's connections (remembered through httpcore's documented
    ``trace`` extension as they are made: pass ``extensions={"trace": deadline.trace}``)
    when the time is up: the blocked read returns at once, and whatever error the cut
    connection raises is the caller's to report as the total timeout when :attr:`expired`.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        connection = stream.get_extra_info("socket") if stream is not None else None
        if connection is None:
            return
        with self._lock:
            self._sockets.append(connection)
            if self.expired:  # connected after the deadline (a slow name lookup)
                _shut(connection)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for connection in self._sockets:
                _shut(connection)


def _shut(connection: socket.socket) -> None:
    import socket  # not at module level: the settings read this module's defaults at start-up

    with contextlib.suppress(OSError):  # already closed
        connection.shutdown(socket.SHUT_RDWR)
