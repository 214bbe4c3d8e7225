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

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
