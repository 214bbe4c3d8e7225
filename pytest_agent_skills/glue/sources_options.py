"""pytest glue for URL skill roots: the cache folder and download timeout settings.

The values are installed as the process-wide defaults of
:func:`pytest_agent_skills.sources.resolve_root` for the whole test session,
so every caller (collection, fixtures, scenarios) uses the same cache.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from .. import settings
from ..errors import ConfigurationError
from ..httpbounds import MAX_TOTAL_TIMEOUT
from ..settings import Setting
from ..sources.options import Limits, SourceOptions, use_options

SOURCE_SETTINGS = settings.declare(
    Setting(
        ini="skills_cache_dir",
        env="SKILLS_CACHE_DIR",
        metavar="DIR",
        help="cache folder of URL skill roots (default: $XDG_CACHE_HOME or ~/.cache, then"
        " pytest-agent-skills/skills); a relative folder is taken from the invocation folder",
    ),
    Setting(
        ini="skills_download_timeout",
        kind="float",
        default=Limits().read_timeout,
        metavar="SECONDS",
        help="connect and read timeout of URL skill-root downloads, in seconds",
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, SOURCE_SETTINGS)


def source_options(config: pytest.Config) -> SourceOptions:
    """The :class:`SourceOptions` chosen by flags, environment and ini options."""
    try:
        return options_from_settings(settings.PluginSettings(config), config.invocation_params.dir)
    except ConfigurationError as error:
        raise pytest.UsageError(str(error)) from None


def options_from_settings(setting: Any, base_dir: Path) -> SourceOptions:
    """The :class:`SourceOptions` of the settings (``setting(ini_name)`` gives each,
    ``setting.origin(ini_name)`` where it comes from: the plugin's
    :class:`~pytest_agent_skills.settings.PluginSettings` or the CLI's); a relative cache
    folder is taken from ``base_dir``."""
    timeout = settings.positive_number(
        setting, "skills_download_timeout", "seconds", at_most=MAX_TOTAL_TIMEOUT
    )
    cache_dir = setting("skills_cache_dir") or None
    if cache_dir is not None:
        cache_dir = base_dir / Path(cache_dir).expanduser()
    limits = replace(Limits(), connect_timeout=timeout, read_timeout=timeout)
    return SourceOptions(cache_dir=cache_dir, limits=limits)


def pytest_configure(config: pytest.Config) -> None:
    stack = ExitStack()
    stack.enter_context(use_options(source_options(config)))
    config.add_cleanup(stack.close)
