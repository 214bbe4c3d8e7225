"""Stream an ``http(s)://`` root to a file with httpx, under size and time limits."""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING

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
    (or announces nothing) is cut off at the cap.
    """
    import httpx

    timeout = httpx.Timeout(
        connect=limits.connect_timeout,
        read=limits.read_timeout,
        write=limits.read_timeout,
        pool=limits.connect_timeout,
    )
    try:
        with httpx.Client(
            follow_redirects=True,
            max_redirects=limits.max_redirects,
            timeout=timeout,
            verify=_ssl_context(),
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
        ) as client, client.stream("GET", url) as response:
            if not response.is_success:
                raise DownloadStatusError(shown, response.status_code, response.reason_phrase)
            _check_announced_size(response.headers.get("content-length"), shown, limits)
            return _stream_to_file(response, target, shown, limits)
    except httpx.TooManyRedirects:
        raise RedirectLimitError(
            shown,
            f"more than {limits.max_redirects} redirects (a redirect loop?); link to the final"
            " address of the archive",
        ) from None
    except httpx.TimeoutException as error:
        raise DownloadTimeoutError(shown, _timeout_message(error, limits)) from None
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as error:
        # InvalidURL (a bad port, a control character, too long) is no HTTPError; a host
        # label that is not valid IDNA raises UnicodeError while connecting.
        reason = mask_urls(str(error)) or type(error).__name__
        raise DownloadError(shown, f"download failed: {reason}") from None


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
    deadline = time.monotonic() + limits.total_timeout
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
            if time.monotonic() > deadline:
                raise DownloadTimeoutError(
                    shown,
                    f"the download took longer than {limits.total_timeout:g} s in total",
                )
            out.write(chunk)
    return received


def _timeout_message(error: Exception, limits: Limits) -> str:
    import httpx

    if isinstance(error, (httpx.ConnectTimeout, httpx.PoolTimeout)):
        return f"no connection within {limits.connect_timeout:g} s (connect timeout)"
    return (
        f"the server sent nothing for {limits.read_timeout:g} s (read timeout); raise"
        " skills_download_timeout if the server is just slow"
    )
