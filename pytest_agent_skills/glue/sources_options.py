"""pytest glue for URL skill roots: the cache folder and download timeout settings.

The values are installed as the process-wide defaults of
:func:`pytest_agent_skills.sources.resolve_root` for the whole test session,
so every caller (collection, fixtures, scenarios) uses the same cache.
"""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from .. import settings
from ..config import sources
from ..config.sources import SOURCE_SETTINGS
from ..errors import ConfigurationError
from ..sources.options import SourceOptions, use_options


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, SOURCE_SETTINGS)


def source_options(config: pytest.Config) -> SourceOptions:
    """The :class:`SourceOptions` chosen by flags, environment and ini options."""
    try:
        return sources.source_options(
            settings.PluginSettings(config), config.invocation_params.dir
        )
    except ConfigurationError as error:
        raise pytest.UsageError(str(error)) from None


def pytest_configure(config: pytest.Config) -> None:
    stack = ExitStack()
    stack.enter_context(use_options(source_options(config)))
    config.add_cleanup(stack.close)
