"""The settings of URL skill roots (cache folder, download timeout) and the
:class:`~pytest_agent_skills.sources.options.SourceOptions` they build."""

from __future__ import annotations

from pathlib import Path

from .. import settings
from ..httpbounds import MAX_TOTAL_TIMEOUT
from ..settings import Setting, SettingValues
from ..sources.options import Limits, SourceOptions

SOURCE_SETTINGS = settings.declare(
    Setting(
        ini="skills_cache_dir",
        metavar="DIR",
        default_shown="$XDG_CACHE_HOME or ~/.cache, then pytest-agent-skills/skills",
        help="cache folder of URL skill roots; a relative folder is taken from the invocation"
        " folder",
    ),
    Setting(
        ini="skills_download_timeout",
        kind="float",
        default=Limits().read_timeout,
        metavar="SECONDS",
        help="connect and read timeout of URL skill-root downloads, in seconds",
    ),
)


def source_options(values: SettingValues, invocation_dir: Path) -> SourceOptions:
    """The :class:`SourceOptions` of the settings; a relative cache folder is taken from
    ``invocation_dir``.  A bad value raises
    :class:`~pytest_agent_skills.errors.ConfigurationError` naming where it was set."""
    timeout = settings.positive_number(
        values, "skills_download_timeout", "seconds", at_most=MAX_TOTAL_TIMEOUT
    )
    configured = values("skills_cache_dir") or None
    cache_dir = None if configured is None else invocation_dir / Path(configured).expanduser()
    limits = Limits(connect_timeout=timeout, read_timeout=timeout)
    return SourceOptions(cache_dir=cache_dir, limits=limits)
