"""Limits and options for URL skill roots, and the process-wide defaults.

The size limits match the reference runtime (64 MiB download, 64 MiB per
extracted file, 256 MiB in total); the count, depth and time limits are ours
(the reference has none).  The pytest glue installs the options chosen by
flags / ini / environment with :func:`use_options`; library callers may pass
an explicit :class:`SourceOptions` to ``resolve_root`` instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

MIB = 1024 * 1024


class Limits(NamedTuple):
    """Every bound applied while downloading and unpacking a root."""

    max_download_bytes: int = 64 * MIB
    max_file_bytes: int = 64 * MIB
    max_total_bytes: int = 256 * MIB
    max_entries: int = 10_000
    max_depth: int = 32
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 600.0
    max_redirects: int = 10


class SourceOptions(NamedTuple):
    """Where the cache lives (``None``: the default location) and the limits."""

    cache_dir: Path | None = None
    limits: Limits = Limits()


_current = SourceOptions()


def current_options() -> SourceOptions:
    return _current


@contextmanager
def use_options(options: SourceOptions) -> Iterator[SourceOptions]:
    """Make ``options`` the default of ``resolve_root`` inside the block."""
    global _current
    previous, _current = _current, options
    try:
        yield options
    finally:
        _current = previous
