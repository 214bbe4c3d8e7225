"""Skill roots: resolve a root given as a path or URL to a local folder.

* a local path to a folder (or to nothing: the repository reports that) is
  returned as it is; a local path or ``file://`` URL to an archive or a
  ``SKILL.md`` is unpacked into the cache;
* an ``http(s)://`` URL is downloaded (:mod:`.download`), unpacked
  (:mod:`.archive`) and cached (:mod:`.cache`); a cached URL is used without
  any network request until ``refresh=True``.

Every failure is one :class:`SourceError` subclass naming the root, the entry
and the limit.  See ``docs/url-roots.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: Public name -> module of this package defining it; each is imported on first use, so that
#: the pytest plugin, which needs only the options at start-up, loads nothing else.
_EXPORTS = {
    "ArchiveError": "errors",
    "ArchiveRejectedError": "errors",
    "CacheError": "errors",
    "CorruptArchiveError": "errors",
    "DownloadError": "errors",
    "DownloadStatusError": "errors",
    "DownloadTimeoutError": "errors",
    "DownloadTooLargeError": "errors",
    "RedirectLimitError": "errors",
    "SourceError": "errors",
    "UnsupportedRootError": "errors",
    "Limits": "options",
    "SourceOptions": "options",
    "current_options": "options",
    "use_options": "options",
    "SkillCache": "cache",
    "default_cache_dir": "cache",
    "RootSpec": "urls",
    "parse_root": "urls",
    "resolve_root": "resolve",
}

__all__ = [
    "ArchiveError",
    "ArchiveRejectedError",
    "CacheError",
    "CorruptArchiveError",
    "DownloadError",
    "DownloadStatusError",
    "DownloadTimeoutError",
    "DownloadTooLargeError",
    "Limits",
    "RedirectLimitError",
    "SourceError",
    "SourceOptions",
    "UnsupportedRootError",
    "default_cache_dir",
    "resolve_root",
    "use_options",
]

if TYPE_CHECKING:  # the lazy names' own types, for type checkers
    from .cache import SkillCache as SkillCache
    from .cache import default_cache_dir as default_cache_dir
    from .errors import ArchiveError as ArchiveError
    from .errors import ArchiveRejectedError as ArchiveRejectedError
    from .errors import CacheError as CacheError
    from .errors import CorruptArchiveError as CorruptArchiveError
    from .errors import DownloadError as DownloadError
    from .errors import DownloadStatusError as DownloadStatusError
    from .errors import DownloadTimeoutError as DownloadTimeoutError
    from .errors import DownloadTooLargeError as DownloadTooLargeError
    from .errors import RedirectLimitError as RedirectLimitError
    from .errors import SourceError as SourceError
    from .errors import UnsupportedRootError as UnsupportedRootError
    from .options import Limits as Limits
    from .options import SourceOptions as SourceOptions
    from .options import current_options as current_options
    from .options import use_options as use_options
    from .resolve import resolve_root as resolve_root
    from .urls import RootSpec as RootSpec
    from .urls import parse_root as parse_root


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
