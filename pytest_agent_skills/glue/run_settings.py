"""The session's :class:`~pytest_agent_skills.harness.RunSettings`, read from the pytest
settings, and the redaction they imply for whatever a failure shows."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from .. import settings
from ..httpbounds import MAX_TOTAL_TIMEOUT

if TYPE_CHECKING:
    from ..harness.run_settings import RunSettings


def run_settings(config: pytest.Config) -> RunSettings:
    """The settings every conversation of this session runs with (its runtime aside: each
    conversation's own ``runtime`` chooses one of the session's)."""
    from ..harness.cassette import Upstream
    from ..harness.run_settings import RunSettings

    key_env = settings.value(config, "skills_upstream_key_env") or "OPENAI_API_KEY"
    url = settings.value(config, "skills_upstream_url")
    upstream = None
    if url:
        values = settings.PluginSettings(config)
        upstream = Upstream(
            url,
            os.environ.get(key_env, ""),
            total_timeout=settings.positive_number(
                values, "skills_upstream_timeout", "seconds", at_most=MAX_TOTAL_TIMEOUT
            ),
            max_response_bytes=settings.positive_number(
                values, "skills_upstream_max_bytes", "bytes"
            ),
        )
    return RunSettings(
        transport=settings.value(config, "skills_transport"),
        record_mode=settings.value(config, "skills_record"),
        upstream=upstream,
        secret_env=(key_env, "OPENAI_API_KEY", *settings.value(config, "skills_redact_env")),
        model_name=settings.value(config, "skills_model"),
        match_ignore=tuple(settings.value(config, "skills_match_ignore")),
        load_mode=settings.value(config, "skills_load_mode"),
    )


def redacted(config: pytest.Config, text: str) -> str:
    """``text`` as it may be shown: secret values (the upstream key, ``skills_redact_env``)
    replaced and URLs masked, as in cassettes."""
    return run_settings(config).redactor().redact_text(text)
