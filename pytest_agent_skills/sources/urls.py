"""Parse a skill-root spec: a local path, a ``file://`` URL or an ``http(s)://`` URL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import unquote, urlsplit

from ..redaction import mask_url
from .errors import UnsupportedRootError

RootKind = Literal["path", "file", "http"]


@dataclass(frozen=True)
class RootSpec:
    """A parsed skill root.

    ``key`` identifies the root in the cache (the URL as written for http(s),
    a ``file://`` URL of the absolute path otherwise); ``shown`` is how errors
    name it (a URL's userinfo and secret query values masked: :func:`mask_url`).
    """

    kind: RootKind
    key: str
    shown: str
    path: Path | None = None

    @property
    def url_path(self) -> PurePosixPath:
        """The path part of the URL (or the local path) used to name files and skills."""
        if self.path is not None:
            return PurePosixPath(self.path.as_posix())
        return PurePosixPath(unquote(urlsplit(self.key).path))


def parse_root(spec: str | Path, base_dir: Path | None = None) -> RootSpec:
    text = str(spec).strip()
    if "://" not in text:
        path = Path(text).expanduser()
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        return RootSpec("path", path.absolute().as_uri(), str(path), path)
    try:
        parts = urlsplit(text)
    except ValueError as error:  # e.g. an unclosed IPv6 bracket
        raise UnsupportedRootError(
            mask_url(text),
            f"the URL cannot be parsed ({error}); write it as https://host/path",
        ) from None
    shown = mask_url(text)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if not parts.hostname:
            raise UnsupportedRootError(shown, "the URL has no host; write it as https://host/path")
        return RootSpec("http", text, shown)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise UnsupportedRootError(
                shown,
                f"unsupported file URL host {parts.netloc!r}; a file:// URL must name a local"
                " file (file:///path or file://localhost/path)",
            )
        path = Path(unquote(parts.path))
        return RootSpec("file", path.absolute().as_uri(), shown, path)
    raise UnsupportedRootError(
        shown,
        f"unsupported skills root URL scheme {parts.scheme!r}; use a local path, a file:// URL"
        " or an http(s):// URL",
    )
