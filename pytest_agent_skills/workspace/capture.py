"""Bounded capture of a byte stream: keep the head, count the rest, never grow past the cap."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BoundedCapture:
    """Keeps the first ``cap`` bytes written to it and counts every byte."""

    cap: int
    total: int = 0
    _chunks: list[bytes] = field(default_factory=list)
    _kept: int = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.cap - self._kept
        if room > 0:
            piece = data[:room]
            self._chunks.append(piece)
            self._kept += len(piece)

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def data(self) -> bytes:
        return b"".join(self._chunks)

    def text(self) -> tuple[str, bool]:
        """The kept bytes as text, and whether they were valid UTF-8.

        A multi-byte character cut by the cap is dropped rather than reported
        as invalid; other invalid bytes become U+FFFD.
        """
        return decode_head(self.data(), self.truncated)


def decode_head(data: bytes, cut: bool) -> tuple[str, bool]:
    """Decode ``data`` (the head of something longer when ``cut``) as UTF-8."""
    if cut:
        data = drop_partial_tail(data)
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), False


def drop_partial_tail(data: bytes) -> bytes:
    """Remove an incomplete UTF-8 sequence at the end of ``data``."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0b1100_0000 == 0b1000_0000:
            continue  # continuation byte: look further back for the lead byte
        if byte & 0b1000_0000 == 0:
            return data
        expected = 2 if byte < 0b1110_0000 else 3 if byte < 0b1111_0000 else 4
        return data if back >= expected else data[:-back]
    return data
