"""The attached stream of a Docker ``exec``, read from its socket without losing its start.

``exec_start`` answers ``101 UPGRADED`` and then streams the command's output on the same
connection.  The HTTP client reads the response headers through a buffered reader; when the
output arrives before the client reads them (a loaded machine, a command that prints at once),
the first frames land in that reader's buffer, not in the socket.  The Docker SDK then reads
the socket underneath and never sees them (an ``echo`` ran with exit status 0 and no output);
:class:`ExecAttachment` hands them out first.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

_STREAMS = {1: "stdout", 2: "stderr"}
_HEADER = struct.Struct(">BxxxL")


#: Where a frame's bytes go: ``feed(stream, data)``, ``stream`` ``"stdout"`` or ``"stderr"``.
FrameSink = Callable[[str, bytes], None]


class ExecAttachment:
    """The started exec's connection: :attr:`socket` carries stdin one way, output the other.

    Take :meth:`buffered` once, before reading :attr:`socket`.
    """

    def __init__(self, api: Any, exec_id: str, *, tty: bool) -> None:
        # The SDK hands back the connection's socket (wrapped in a SocketIO on a Unix socket).
        self._response = api.exec_start(exec_id, socket=True, tty=tty)
        self.socket: Any = getattr(self._response, "_sock", self._response)

    def buffered(self) -> bytes:
        """The output the HTTP client read along with the response headers."""
        try:
            reader = self._response._response.raw._fp.fp
        except AttributeError:
            return b""
        if reader is None:
            return b""
        timeout = self.socket.gettimeout()
        self.socket.setblocking(False)  # take what is there without waiting for more
        try:
            buffered = reader.peek()
        except (BlockingIOError, ValueError, OSError):
            buffered = b""
        finally:
            self.socket.settimeout(timeout)
        return reader.read(len(buffered)) if buffered else b""

    def close(self) -> None:
        self.socket.close()
        self._response.close()


class Demultiplexer:
    """Splits Docker's attach stream (8-byte frame headers) into stdout and stderr."""

    def __init__(self, sink: FrameSink, tty: bool) -> None:
        self._sink = sink
        self._tty = tty
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        if self._tty:
            self._sink("stdout", data)
            return
        self._buffer += data
        while len(self._buffer) >= _HEADER.size:
            kind, size = _HEADER.unpack_from(self._buffer)
            if len(self._buffer) < _HEADER.size + size:
                return
            payload = bytes(self._buffer[_HEADER.size : _HEADER.size + size])
            del self._buffer[: _HEADER.size + size]
            self._sink(_STREAMS.get(kind, "stdout"), payload)
