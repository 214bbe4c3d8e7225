"""Skill roots: resolve a root given as a path or URL to a local folder.

Placeholder until URL roots land: local paths and ``file://`` folders only.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from ..errors import AgentSkillsError


class SourceError(AgentSkillsError):
    """A skill root that cannot be resolved."""


def resolve_root(spec: str | Path, *, refresh: bool = False, base_dir: Path | None = None) -> Path:
    """A local folder for ``spec`` (a path, or a URL once supported)."""
    text = str(spec)
    if "://" not in text:
        path = Path(text).expanduser()
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        return path
    parsed = urlparse(text)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(unquote(parsed.path))
    raise SourceError(f"unsupported skills root URL: {text!r}")
