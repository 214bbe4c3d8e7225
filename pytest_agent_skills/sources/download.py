"""Stream an ``http(s)://`` root to a file with httpx, under size and time limits."""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..redaction import mask_urls
from .errors import (
    DownloadError,
    DownloadStatusError,
    DownloadTimeoutError,
    DownloadTooLargeError,
    RedirectLimitError,
)
from .options import Limits

if TYPE_CHECKING:
    import ssl

    import httpx

CHUNK_BYTES = 256 * 1024
USER_AGENT = "pytest-agent-skills (skill root download)"


def download(url: str, target: Path, *, shown: str, limits: Limits) -> int:
    """Write the body at ``url`` to ``target``; the number of bytes written.

    The size cap is checked against ``Content-Length`` before the body is read
    and again on every chunk, so a server that announces less than it sends
    (or announces nothing) is cut off at the cap.  The total timeout runs on the
    clock from the request on (see :class:`_Deadline`): a server that drips
    its headers or its body a byte at a time is cut off when it is over.
    """
    import httpx

    deadline = _Deadline(limits.total_timeout)
    timeout = httpx.Timeout(
        connect=limits.connect_timeout,
        read=limits.read_timeout,
        write=limits.read_timeout,
        pool=limits.connect_timeout,
    )
    try:
        with deadline, httpx.Client(
            follow_redirects=True,
            max_redirects=limits.max_redirects,
            timeout=timeout,
            verify=_ssl_context(),
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
        ) as client, client.stream(
            "GET", url, extensions={"trace": deadline.trace}
        ) as response:
            if not response.is_success:
                raise DownloadStatusError(shown, response.status_code, response.reason_phrase)
            _check_announced_size(response.headers.get("content-length"), shown, limits)
            return _stream_to_file(response, target, shown, limits)
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as error:
        # InvalidURL (a bad port, a control character, too long) is no HTTPError; a host
        # label that is not valid IDNA raises UnicodeError while connecting.
        raise _typed_error(error, shown, limits, deadline.expired) from None


def _typed_error(error: Exception, shown: str, limits: Limits, expired: bool) -> DownloadError:
    import httpx

    if expired:  # whatever the cut connection raised
        return DownloadTimeoutError(
            shown, f"the download took longer than {limits.total_timeout:g} s in total"
        )
    if isinstance(error, httpx.TooManyRedirects):
        return RedirectLimitError(
            shown,
            f"more than {limits.max_redirects} redirects (a redirect loop?); link to the final"
            " address of the archive",
        )
    if isinstance(error, httpx.TimeoutException):
        return DownloadTimeoutError(shown, _timeout_message(error, limits))
    reason = mask_urls(str(error)) or type(error).__name__
    return DownloadError(shown, f"download failed: {reason}")


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process: loading the CA bundle costs ~70 ms each time."""
    import httpx

    return httpx.create_ssl_context()


def _check_announced_size(header: str | None, shown: str, limits: Limits) -> None:
    if header is None:
        return
    try:
        announced = int(header)
    except ValueError:
        raise DownloadError(
            shown, f"the server sent an invalid Content-Length {header!r}"
        ) from None
    if announced > limits.max_download_bytes:
        raise DownloadTooLargeError(
            shown,
            f"the server announces {announced} bytes (Content-Length), over the download limit"
            f" of {limits.max_download_bytes} bytes; publish a smaller archive",
        )


def _stream_to_file(response: httpx.Response, target: Path, shown: str, limits: Limits) -> int:
    received = 0
    with open(target, "wb") as out:
        for chunk in response.iter_bytes(CHUNK_BYTES):
            received += len(chunk)
            if received > limits.max_download_bytes:
                raise DownloadTooLargeError(
                    shown,
                    f"the body is over the download limit of {limits.max_download_bytes} bytes"
                    " (cut off while streaming); publish a smaller archive",
                )
            out.write(chunk)
    return received


class _Deadline:
    """The total timeout of one download, on the clock.

    httpx has read and connect timeouts but none for a whole request, so a server
    sending a byte now and then keeps every read alive.  A timer shuts down the
    download's connections (remembered through httpcore's documented ``trace``
    extension as they are made) when the time is up: the blocked read returns at
    once, and the error it raises is reported as the total timeout.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
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
    with contextlib.suppress(OSError):  # already closed
        connection.shutdown(socket.SHUT_RDWR)


def _timeout_message(error: Exception, limits: Limits) -> str:
    import httpx

    if isinstance(error, (httpx.ConnectTimeout, httpx.PoolTimeout)):
        return f"no connection within {limits.connect_timeout:g} s (connect timeout)"
    return (
        f"the server sent nothing for {limits.read_timeout:g} s (read timeout); raise"
        " skills_download_timeout if the server is just slow"
    )
