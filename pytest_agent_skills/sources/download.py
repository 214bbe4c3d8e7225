"""Stream an ``http(s)://`` root to a file with httpx, under size and time limits."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import httpbounds
from ..httpbounds import BodyTooLargeError, Deadline, InvalidContentLengthError
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
    import httpx

USER_AGENT = "pytest-agent-skills (skill root download)"
#: How the fix reads after a size limit was hit.
TOO_LARGE_FIX = "publish a smaller archive"


def download(url: str, target: Path, *, shown: str, limits: Limits) -> int:
    """Write the body at ``url`` to ``target``; the number of bytes written.

    The size cap is checked against ``Content-Length`` before the body is read
    and again on every chunk, so a server that announces less than it sends
    (or announces nothing) is cut off at the cap.  The total timeout runs on the
    clock from the request on (see :class:`~pytest_agent_skills.httpbounds.Deadline`):
    a server that drips its headers or its body a byte at a time is cut off when it is over.
    """
    import httpx

    deadline = Deadline(limits.total_timeout)
    try:
        with deadline, httpbounds.client(
            connect_timeout=limits.connect_timeout,
            read_timeout=limits.read_timeout,
            headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
            max_redirects=limits.max_redirects,
        ) as client, client.stream(
            "GET", url, extensions={"trace": deadline.trace}
        ) as response:
            if not response.is_success:
                raise DownloadStatusError(shown, response.status_code, response.reason_phrase)
            return _stream_to_file(response, target, limits)
    except BodyTooLargeError as error:
        raise DownloadTooLargeError(
            shown, f"{error.describe('download')}; {TOO_LARGE_FIX}"
        ) from None
    except InvalidContentLengthError as error:
        raise DownloadError(shown, str(error)) from None
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


def _stream_to_file(response: httpx.Response, target: Path, limits: Limits) -> int:
    chunks = httpbounds.capped_chunks(response, limits.max_download_bytes)  # checks the header
    received = 0
    with open(target, "wb") as out:
        for chunk in chunks:
            received += len(chunk)
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
