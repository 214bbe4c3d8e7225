"""The session's :class:`~pytest_agent_skills.harness.RunSettings`, from the pytest settings
(built by :mod:`pytest_agent_skills.config.runs`), and the redaction they imply for whatever a
failure shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .. import settings
from ..config import runs

if TYPE_CHECKING:
    from ..harness.run_settings import RunSettings


def run_settings(config: pytest.Config) -> RunSettings:
    """The settings every conversation of this session runs with (its runtime aside: each
    conversation's own ``runtime`` chooses one of the session's)."""
    return runs.run_settings(settings.PluginSettings(config))


def redacted(config: pytest.Config, text: str) -> str:
    """``text`` as it may be shown: secret values (the upstream key, ``skills_redact_env``)
    replaced and URLs masked, as in cassettes."""
    return run_settings(config).redactor().redact_text(text)
