"""The typed errors of skill-root resolution.

Every message starts with the root as the user wrote it (a URL with any
password hidden, or a path), then says what was found and, where it helps,
the limit that was hit and how to fix it.
"""

from __future__ import annotations

from ..errors import AgentSkillsError


class SourceError(AgentSkillsError):
    """A skill root that cannot be resolved to a local folder."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        self.detail = message
        super().__init__(f"{source}: {message}")


class UnsupportedRootError(SourceError):
    """A URL scheme, ``file://`` host or file type that cannot be a skill root."""


class DownloadError(SourceError):
    """Downloading an ``http(s)://`` root failed (connection, protocol)."""


class DownloadStatusError(DownloadError):
    """The server answered with a status other than 2xx."""

    def __init__(self, source: str, status: int, reason: str) -> None:
        self.status = status
        super().__init__(
            source,
            f"download failed with HTTP {status} {reason}".rstrip()
            + "; check that the URL is right and reachable",
        )


class DownloadTimeoutError(DownloadError):
    """The server was too slow (connect, read or overall deadline)."""


class DownloadTooLargeError(DownloadError):
    """The download is over the size limit (announced or streamed)."""


class RedirectLimitError(DownloadError):
    """Too many redirects, usually a redirect loop."""


class ArchiveError(SourceError):
    """A downloaded or local archive that cannot be unpacked safely."""

    def __init__(self, source: str, message: str, *, entry: str | None = None) -> None:
        self.entry = entry
        super().__init__(source, message)


class ArchiveRejectedError(ArchiveError):
    """An archive entry that would be unsafe to write (path, type, size, count)."""


class CorruptArchiveError(ArchiveError):
    """An archive that is truncated, malformed or whose sizes / checksums do not match."""


class CacheError(SourceError):
    """The cache folder cannot be created, written or locked."""
