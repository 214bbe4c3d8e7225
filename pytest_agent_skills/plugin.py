"""The pytest entry point (``pytest11``): glue only.

Each concern lives in its own glue module under :mod:`pytest_agent_skills.glue`;
this module registers them, adds the settings shared by all of them (the skill roots),
validates every setting once at start-up and echoes the active configuration in the report
header.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from . import settings
from .config.gate import GATE_SETTINGS
from .config.roots import ROOT_SETTINGS
from .settings import GLUE_PLUGINS


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    settings.add_to_parser(parser, (*ROOT_SETTINGS, *GATE_SETTINGS))
    # Registered here, not listed in `pytest_plugins`: pytest would look each name of such a
    # list up among every installed distribution's entry points, a scan per name on every run.
    for name in GLUE_PLUGINS:  # each one's pytest_addoption runs as it is registered
        if not pluginmanager.has_plugin(name):  # e.g. loaded first by `-p NAME`
            pluginmanager.register(importlib.import_module(name), name)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    from .errors import ConfigurationError

    try:
        for setting in settings.REGISTRY:
            settings.value(config, setting.ini)
    except ConfigurationError as error:
        raise pytest.UsageError(str(error)) from None


#: Always shown in the report header; any other setting only when it is not at its default.
HEADER_SETTINGS = ("skills_roots", "skills_runtime", "skills_profile", "skills_record")


def pytest_report_header(config: pytest.Config) -> list[str]:
    shown: list[str] = []
    for setting, resolved in settings.active(config):
        if setting.ini in HEADER_SETTINGS or resolved != setting.default:
            shown.append(f"{setting.ini}={_show(resolved)}")
    return ["agent-skills: " + ", ".join(shown)]


def _show(resolved: Any) -> str:
    from .redaction import mask_urls  # a URL root's password or token is never shown

    if isinstance(resolved, list):
        return "[" + ", ".join(mask_urls(item) for item in resolved) + "]"
    if isinstance(resolved, str):
        return mask_urls(resolved) or "-"
    if isinstance(resolved, bool):
        return "true" if resolved else "false"
    return "-" if resolved in (None, "") else str(resolved)
