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
from ..sources.options import SourceOptions, use_options
from . import usage_errors


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, SOURCE_SETTINGS)


def source_options(config: pytest.Config) -> SourceOptions:
    """The :class:`SourceOptions` chosen by flags, environment and ini options."""
    with usage_errors():
        return sources.source_options(settings.PluginSettings(config), config.invocation_params.dir)


def pytest_configure(config: pytest.Config) -> None:
    stack = ExitStack()
    stack.enter_context(use_options(source_options(config)))
    config.add_cleanup(stack.close)
