"""``resolve_root``: a skill root given as a path or URL, as a local folder (see the package)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import SkillCache, default_cache_dir
from .errors import ArchiveRejectedError, CacheError, UnsupportedRootError
from .options import SourceOptions, current_options
from .urls import RootSpec, parse_root

if TYPE_CHECKING:
    from .archive import ArchiveFormat


def resolve_root(
    spec: str | Path,
    *,
    refresh: bool = False,
    base_dir: Path | None = None,
    options: SourceOptions | None = None,
) -> Path:
    """A local folder for ``spec``: a path, a ``file://`` URL or an ``http(s)://`` URL.

    ``base_dir`` anchors relative paths; ``refresh`` downloads / unpacks again
    (once per process) instead of using the cache; ``options`` defaults to the
    process-wide options (see :func:`use_options`).
    """
    root = parse_root(spec, base_dir)
    options = options or current_options()
    if root.kind == "http":
        fill, stamp = partial(_fetch_and_unpack, root, options=options), ""
    else:
        assert root.path is not None
        path = root.path
        if not path.is_file():
            return path
        fmt = _local_format(root, path)
        stat = path.stat()
        fill = partial(_unpack, root, path, fmt, options=options)
        stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    entry = _cache(options).get(root.key, fill, shown=root.shown, stamp=stamp, refresh=refresh)
    return _holding_a_skill(entry, root)


def _holds_a_skill(folder: Path) -> bool:
    from ..repository import find_skill_dirs

    return next(find_skill_dirs(folder), None) is not None


def _holding_a_skill(entry: Path, root: RootSpec) -> Path:
    """``entry``, a cache entry marked ready: only archives holding a skill are cached, so one
    that holds none was changed since (a corrupt cache)."""
    if not _holds_a_skill(entry):
        raise CacheError(
            root.shown,
            f"the cached copy {entry} is marked ready but holds no skill (no SKILL.md): the cache"
            " is corrupt. Run again with --skills-refresh (agent-skills validate --refresh) to"
            f" fetch it again, or delete {entry}",
        )
    return entry


def _cache(options: SourceOptions) -> SkillCache:
    return SkillCache(options.cache_dir or default_cache_dir())


def _read_format(path: Path, name: str) -> tuple[ArchiveFormat | None, bytes]:
    """The format of the root file at ``path`` named ``name``, and its first bytes."""
    from .archive import HEAD_BYTES, detect_format

    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
    return detect_format(name, head), head


def _unpack(
    root: RootSpec, file: Path, fmt: ArchiveFormat, staging: Path, options: SourceOptions
) -> Path:
    from .archive import unpack

    unpacked = unpack(
        file, fmt, staging / "unpacked", shown=root.shown, url_path=root.url_path,
        limits=options.limits,
    )
    if not _holds_a_skill(unpacked):
        raise ArchiveRejectedError(
            root.shown,
            "the archive holds no SKILL.md, so no skill; link to an archive of skill folders"
            " (each holding a SKILL.md)",
        )
    return unpacked


def _local_format(root: RootSpec, path: Path) -> ArchiveFormat:
    fmt, _head = _read_format(path, path.name)
    if fmt is None:
        raise UnsupportedRootError(
            root.shown,
            "the file is neither an archive (.zip, .tar, .tar.gz, .tgz) nor a SKILL.md;"
            " point the root at a folder, an archive or a SKILL.md",
        )
    return fmt


def _fetch_and_unpack(root: RootSpec, staging: Path, options: SourceOptions) -> Path:
    from .download import download

    archive = staging / "download"
    download(root.key, archive, shown=root.shown, limits=options.limits)
    fmt, head = _read_format(archive, root.url_path.name)
    if fmt is None:
        raise UnsupportedRootError(
            root.shown,
            "the downloaded file is neither a zip, a tar, a gzip-compressed tar nor a SKILL.md"
            f" (it starts with {head[:16]!r}); link to a .zip, .tar, .tar.gz, .tgz or SKILL.md",
        )
    return _unpack(root, archive, fmt, staging, options)
