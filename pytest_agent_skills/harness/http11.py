"""The HTTP/1.1 wire format the loopback server speaks: requests read off a kept-alive
connection, answers written in one piece.

The standard library's ``http.server`` parses each request's headers with the ``email``
package (~45 us, more than the rest of the server's work on a request) and writes the status,
the headers and the body in separate sends, each of which wakes the client thread waiting in
the same process for its response; a 10-request conversation paid ~3 ms for it. Here a head is
split by hand (~5 us) and an answer is one ``sendall``.

Strict: a request this module cannot read exactly (a bad request line or header, a bad
``Content-Length`` or chunk size, an unsupported ``Transfer-Encoding``, a head over 64 KiB) is a
:class:`BadRequest`, which the server answers with its status and then closes the connection.
"""

from __future__ import annotations

import email.utils
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus

#: The longest request head (request line and headers) read, as the standard library's limit.
MAX_HEAD_BYTES = 65536
_RECEIVE_BYTES = 65536
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]+")
_VERSIONS = ("HTTP/1.1", "HTTP/1.0")
#: The request headers the server itself reads.
_READ_HEADERS = frozenset({"connection", "content-length", "expect", "transfer-encoding"})
#: Set by the server from the answer itself, never copied from a backend's headers.
FRAMING_HEADERS = frozenset({"content-type", "content-length", "transfer-encoding", "connection"})


class BadRequest(Exception):
    """A request that cannot be read; the connection cannot be trusted after it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    #: Header names as the client sent them.
    headers: dict[str, str]
    body: bytes
    #: False when the client asked to close the connection after this request (or is HTTP/1.0).
    keep_alive: bool


class RequestReader:
    """Reads one request after another from a connection, keeping what arrived beyond each."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.buffer = b""

    def next_request(self) -> Request | None:
        """The next request, or None when the client closed the connection between requests."""
        head = self._head()
        if head is None:
            return None
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[2] not in _VERSIONS or not parts[0] or not parts[1]:
            raise BadRequest(400, f"bad request line {lines[0][:200]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        folded: dict[str, str] = {}  # the server's own look-ups, by lower-case name
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            # A name with blanks around it: a line folded onto the previous one, or worse.
            if not colon or not name or name != name.strip():
                raise BadRequest(400, f"bad header line {line[:200]!r}")
            headers[name] = value = value.strip(" \t")
            lower = name.lower()
            if lower in _READ_HEADERS:
                folded[lower] = f"{folded[lower]}, {value}" if lower in folded else value
        connection = folded.get("connection", "").lower()
        keep_alive = version == "HTTP/1.1" and "close" not in connection
        if folded.get("expect", "").lower() == "100-continue":
            self.connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        return Request(method, target, headers, self._body(folded), keep_alive)

    def _head(self) -> bytes | None:
        start = 0
        while (end := self.buffer.find(b"\r\n\r\n", start)) < 0 and start <= MAX_HEAD_BYTES:
            start = max(0, len(self.buffer) - 3)
            if not self._receive():
                if self.buffer.strip():
                    raise BadRequest(400, "the connection closed inside a request head")
                return None
        if not 0 <= end <= MAX_HEAD_BYTES:
            raise BadRequest(431, f"request head over {MAX_HEAD_BYTES} bytes")
        head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
        return head

    def _body(self, headers: Mapping[str, str]) -> bytes:
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise BadRequest(501, f"unsupported Transfer-Encoding {coding[:100]!r}")
            return self._chunked()
        length = headers.get("content-length", "0")
        if not (length.isascii() and length.isdigit()):  # "²" is a digit to str.isdigit
            raise BadRequest(400, f"bad Content-Length {length[:100]!r}")
        return self._take(int(length))

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            line = self._line()
            size = line.split(b";", 1)[0].strip()
            # Hex digits only: int() would also take "-1", "0x10", "+5" and "1_0".
            if not _CHUNK_SIZE.fullmatch(size):
                raise BadRequest(400, f"bad chunk size {size[:100]!r}")
            count = int(size, 16)
            if count == 0:
                while self._line():  # trailers, up to the blank line
                    pass
                return b"".join(parts)
            parts.append(self._take(count))
            if self._take(2) != b"\r\n":
                raise BadRequest(400, "a chunk not followed by CRLF")

    def _line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if len(self.buffer) > MAX_HEAD_BYTES:
                raise BadRequest(400, f"a chunk line over {MAX_HEAD_BYTES} bytes")
            self._receive_or_fail()
        line, self.buffer = self.buffer[:end], self.buffer[end + 2 :]
        return line

    def _take(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._receive_or_fail()
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        return taken

    def _receive(self) -> bool:
        data = self.connection.recv(_RECEIVE_BYTES)
        self.buffer += data
        return bool(data)

    def _receive_or_fail(self) -> None:
        if not self._receive():
            raise BadRequest(400, "the connection closed inside a request body")


def answer_bytes(
    status: int,
    content_type: str,
    payload: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    close: bool = False,
) -> bytes:
    """A whole response: status line, headers (with ``Content-Length`` and ``Date``), body."""
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\nDate: {_date()}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(payload)}\r\n"
    )
    for name, value in (headers or {}).items():
        if name.lower() in FRAMING_HEADERS:
            continue
        if any(character in name + value for character in "\r\n"):
            raise ValueError(f"a response header with a line break: {name!r}: {value!r}")
        head += f"{name}: {value}\r\n"
    if close:
        head += "Connection: close\r\n"
    return (head + "\r\n").encode("latin-1") + payload


#: Reason phrases by status (an ``HTTPStatus`` look-up per answer ran the enum machinery).
_REASONS = {status.value: status.phrase for status in HTTPStatus}


_DATE: list[tuple[int, str]] = [(0, "")]


def _date() -> str:
    """The ``Date`` header's value, formatted once a second."""
    now = int(time.time())
    second, text = _DATE[0]
    if second != now:
        text = email.utils.formatdate(now, usegmt=True)
        _DATE[0] = (now, text)
    return text
