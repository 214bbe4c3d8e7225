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
import itertools
import os
import threading
import time
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
    """One verifying TLS context per process: each new one loads and parses the whole CA
    bundle again."""
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

    When the time is up, the connections of the exchange (remembered through httpcore's
    documented ``trace`` extension as they are made: pass ``extensions={"trace":
    deadline.trace}``) are shut down: the blocked read returns at once, and whatever error the
    cut connection raises is the caller's to report as the total timeout when :attr:`expired`.
    The clock runs from entering the ``with`` block to leaving it.  One watchdog thread per
    process keeps every deadline, rather than a timer thread per exchange: a new thread holds
    up the request it guards until the scheduler first runs it.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._seconds = seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        #: Whether the exchange ended (its ``with`` block left).
        self.over = False

    def __enter__(self) -> Deadline:
        _WATCHDOG.watch(self, self._seconds)
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self.over = True
        _WATCHDOG.forget()

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
        """The time is up: shut the exchange's connections (none once it ended)."""
        with self._lock:
            if self.over:
                return
            self.expired = True
            for connection in self._sockets:
                _shut(connection)


class _Watchdog:
    """The thread that expires the deadlines of a process when their time comes: it sleeps
    until the earliest one, and is woken only by a deadline earlier than all others."""

    def __init__(self) -> None:
        self._reset_in_forked_children = False
        self.reset()

    def reset(self) -> None:
        """No deadline and no thread yet (also in a forked child, which has no copy of the
        thread, and whose copy of the lock may be held)."""
        self._condition = threading.Condition(threading.Lock())
        #: (when on the monotonic clock, order of arrival, the deadline): a heap.
        self._heap: list[tuple[float, int, Deadline]] = []
        self._arrivals = itertools.count()
        self._running = 0  # deadlines whose exchange has not ended
        self._thread: threading.Thread | None = None

    def watch(self, deadline: Deadline, seconds: float) -> None:
        import heapq  # here: validate loads this module and never records

        entry = (time.monotonic() + seconds, next(self._arrivals), deadline)
        with self._condition:
            self._running += 1
            if len(self._heap) > 64 and len(self._heap) > 4 * self._running:
                self._heap[:] = [item for item in self._heap if not item[2].over]
                heapq.heapify(self._heap)
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                if not self._reset_in_forked_children:
                    # Only once there is a thread to lose: a process holding an at-fork hook
                    # takes longer to end, and every pytest run would pay that, where few
                    # record.
                    os.register_at_fork(after_in_child=self.reset)
                    self._reset_in_forked_children = True
                self._thread = threading.Thread(
                    target=self._run, name="agent-skills-deadlines", daemon=True
                )
                self._thread.start()
            elif self._heap[0] is entry:
                self._condition.notify()

    def forget(self) -> None:
        """One exchange ended (its entry leaves the heap when it comes first, or sooner)."""
        with self._condition:
            self._running -= 1

    def _run(self) -> None:
        while True:
            with self._condition:
                due = self._next_due()
            due._expire()

    def _next_due(self) -> Deadline:
        import heapq

        heap = self._heap
        while True:
            while heap and heap[0][2].over:
                heapq.heappop(heap)
            if not heap:
                self._condition.wait()
                continue
            left = heap[0][0] - time.monotonic()
            if left <= 0:
                return heapq.heappop(heap)[2]
            self._condition.wait(left)


_WATCHDOG = _Watchdog()


def _shut(connection: socket.socket) -> None:
    import socket  # not at module level: the settings read this module's defaults at start-up

    with contextlib.suppress(OSError):  # already closed
        connection.shutdown(socket.SHUT_RDWR)
