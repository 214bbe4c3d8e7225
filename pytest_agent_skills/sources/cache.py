"""The cache of unpacked URL roots: ``{cache_dir}/{sha256(key)}/``.

An entry is used only when it holds the ``.ready`` marker.  Filling one
happens under a per-key file lock: the content is built in a temporary
sibling (``.tmp-<key>``), the marker is written last, and the folder is
renamed into place, so readers never see a half-written entry and concurrent
processes end with one intact copy (the others find it ready once they get
the lock).  Whatever fails, the temporary folder is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..redaction import mask_url
from .errors import CacheError, SourceError

PROJECT_DIR = "pytest-agent-skills"
READY_FILE = ".ready"
LOCKS_DIR = ".locks"
TMP_PREFIX = ".tmp-"
# Entries made before this moment are stale for ``refresh=True``: a refresh
# downloads each root once per process, however often it is resolved.
PROCESS_START = time.time()


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``SKILLS_CACHE_DIR``, else the user cache folder + ``pytest-agent-skills/skills``.

    On Linux and other Unix systems that is ``$XDG_CACHE_HOME`` when it is an
    absolute path, else ``~/.cache``; on macOS and Windows the platform's user
    cache folder (via platformdirs).
    """
    environ = os.environ if environ is None else environ
    explicit = environ.get("SKILLS_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser().absolute()
    if sys.platform in ("darwin", "win32"):
        import platformdirs

        return Path(platformdirs.user_cache_dir(PROJECT_DIR, appauthor=False)) / "skills"
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / PROJECT_DIR / "skills"


def entry_name(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class SkillCache:
    """Ready-made roots under ``directory``, filled on demand."""

    def __init__(self, directory: Path, *, lock_timeout: float = 900.0) -> None:
        self.directory = Path(directory).absolute()
        self.lock_timeout = lock_timeout

    def entry(self, key: str) -> Path:
        return self.directory / entry_name(key)

    def lookup(self, key: str, *, stamp: str = "", fresh_after: float | None = None) -> Path | None:
        """The ready entry for ``key``, or None when absent, incomplete, stale or refreshed."""
        entry = self.entry(key)
        if not stamp and fresh_after is None:
            return entry if os.path.isfile(entry / READY_FILE) else None
        marker = _read_marker(entry)
        if marker is None or marker.get("stamp", "") != stamp:
            return None
        if fresh_after is not None and float(marker.get("fetched_at", 0)) < fresh_after:
            return None
        return entry

    def get(
        self,
        key: str,
        fill: Callable[[Path], Path],
        *,
        shown: str,
        stamp: str = "",
        refresh: bool = False,
    ) -> Path:
        """The entry for ``key``; ``fill(staging)`` builds it when needed.

        ``fill`` gets an empty temporary folder and returns the folder inside
        it that becomes the entry.  ``stamp`` (e.g. a local file's size and
        time) must match the one the entry was made with.
        """
        fresh_after = PROCESS_START if refresh else None
        found = self.lookup(key, stamp=stamp, fresh_after=fresh_after)
        if found is not None:
            return found
        from filelock import FileLock, Timeout

        name = entry_name(key)
        locks = self.directory / LOCKS_DIR
        try:
            locks.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CacheError(
                shown,
                f"cannot create the cache folder {self.directory} ({error.strerror or error});"
                " set SKILLS_CACHE_DIR to a writable folder",
            ) from None
        lock = locks / f"{name}.lock"
        try:
            with FileLock(str(lock), timeout=self.lock_timeout):
                found = self.lookup(key, stamp=stamp, fresh_after=fresh_after)
                if found is not None:
                    return found
                return self._fill_locked(name, key, fill, shown, stamp)
        except Timeout:  # before OSError: filelock's Timeout is a TimeoutError
            raise CacheError(
                shown,
                f"another process held the cache lock for {name} longer than"
                f" {self.lock_timeout:g} s; remove {lock} if no process uses it",
            ) from None
        except OSError as error:  # opening the lock file (_fill_locked types its own errors)
            raise CacheError(
                shown,
                f"cannot lock the cache entry with {lock} ({error.strerror or error});"
                " set SKILLS_CACHE_DIR to a writable folder",
            ) from None

    def _fill_locked(
        self, name: str, key: str, fill: Callable[[Path], Path], shown: str, stamp: str
    ) -> Path:
        entry = self.directory / name
        # One staging folder per key: we hold the key's lock, so an existing one
        # was left by a process that was killed while filling.
        staging = self.directory / f"{TMP_PREFIX}{name}"
        try:
            if os.path.lexists(staging):
                shutil.rmtree(staging)
            os.mkdir(staging)
        except OSError as error:
            raise CacheError(
                shown, f"cannot write in the cache folder {self.directory} ({error})"
            ) from None
        try:
            root = fill(staging)
            # The key is the URL as written: a password in it must not reach the disk.
            marker = {"key": mask_url(key), "stamp": stamp, "fetched_at": time.time()}
            (root / READY_FILE).write_text(json.dumps(marker), encoding="utf-8")
            if os.path.lexists(entry):
                os.rename(entry, staging / "replaced")
            os.rename(root, entry)
        except SourceError:
            raise
        except OSError as error:
            raise CacheError(shown, f"cannot write the cache entry {entry} ({error})") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return entry


def _read_marker(entry: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((entry / READY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
