"""The settings of conversation runs (runtime aside: see the workspace settings) and the
:class:`~pytest_agent_skills.harness.RunSettings` they build: how the model is reached, what a
cassette records and from where, what is redacted."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import settings
from ..httpbounds import DEFAULT_MAX_BODY_BYTES, DEFAULT_TOTAL_TIMEOUT, MAX_TOTAL_TIMEOUT
from ..settings import Setting, SettingValues

if TYPE_CHECKING:  # the harness loads when settings are built, not with their declarations
    from ..harness.run_settings import RunSettings

RUN_SETTINGS = settings.declare(
    Setting(
        ini="skills_record",
        commands=("eval", "triggers", "improve-description", "grader-check", "mutate"),
        kind="choice",
        choices=("none", "once", "new", "all"),
        default="none",
        help="cassette record mode: none replays only; once records missing cassettes; new records"
        " unmatched requests; all records everything again",
    ),
    Setting(
        ini="skills_upstream_url",
        commands=("eval", "triggers", "improve-description", "grader-check", "mutate"),
        metavar="BASE_URL",
        help="OpenAI-compatible base URL that cassettes are recorded from (e.g."
        " https://api.openai.com/v1)",
    ),
    Setting(
        ini="skills_upstream_key_env",
        default="OPENAI_API_KEY",
        metavar="ENV_NAME",
        help="environment variable holding the API key sent to the upstream when recording",
    ),
    Setting(
        ini="skills_upstream_timeout",
        kind="float",
        default=DEFAULT_TOTAL_TIMEOUT,
        metavar="SECONDS",
        help="total time one upstream answer may take while recording, on the clock, in seconds"
        f" (at most {MAX_TOTAL_TIMEOUT})",
    ),
    Setting(
        ini="skills_upstream_max_bytes",
        kind="int",
        default=DEFAULT_MAX_BODY_BYTES,
        metavar="BYTES",
        help="largest upstream answer read while recording, in bytes (default 64 MiB, the largest"
        " cassette read)",
    ),
    Setting(
        ini="skills_model",
        commands=("triggers", "improve-description", "grader-check", "mutate"),
        default="scripted",
        help="model name sent in chat-completions requests (the upstream model when recording)",
    ),
    Setting(
        ini="skills_transport",
        kind="choice",
        choices=("direct", "sdk", "sdk-stream"),
        default="direct",
        help="how scripted turns reach the agent loop: direct (in process), sdk (the openai client"
        " and a loopback server), sdk-stream (the same, streaming)",
    ),
    Setting(
        ini="skills_load_mode",
        kind="choice",
        choices=("turn", "once", "session"),
        default="turn",
        help="how long loaded skills stay in the prompt (the reference's load modes): turn (until"
        " the next user message; its default), once (one request), session (the whole"
        " conversation, keys without the temp: prefix)",
    ),
    Setting(
        ini="skills_redact_env",
        kind="list",
        metavar="ENV_NAME",
        help="environment variables whose values are redacted from recorded cassettes (the"
        " upstream key variable always is)",
    ),
    Setting(
        ini="skills_model_params",
        commands=("eval", "triggers", "improve-description", "mutate"),
        kind="params",
        flag="--skills-model-param",
        metavar="NAME=JSON",
        help="a field added to every request of the agent (repeatable; e.g. temperature=0,"
        ' seed=7, max_tokens=512, tool_choice="auto"); recorded in cassettes and matched; ini:'
        " one NAME=JSON a line; env: a JSON object or NAME=JSON lines",
    ),
    Setting(
        ini="skills_match_ignore",
        kind="list",
        metavar="FIELD",
        help="extra request fields ignored when matching cassette interactions",
    ),
    section="scenarios",
)


def run_settings(values: SettingValues, environ: Mapping[str, str] | None = None) -> RunSettings:
    """The :class:`RunSettings` of the settings (no runtime: each conversation chooses one);
    the upstream key is read from ``environ`` (default ``os.environ``).  A bad value raises
    :class:`~pytest_agent_skills.errors.ConfigurationError` naming where it was set."""
    from ..harness.cassette import Upstream
    from ..harness.run_settings import RunSettings

    environ = os.environ if environ is None else environ
    key_env = values("skills_upstream_key_env") or "OPENAI_API_KEY"
    url = values("skills_upstream_url")
    upstream = None
    if url:
        upstream = Upstream(
            url,
            environ.get(key_env, ""),
            total_timeout=settings.positive_number(
                values, "skills_upstream_timeout", "seconds", at_most=MAX_TOTAL_TIMEOUT
            ),
            max_response_bytes=settings.positive_number(
                values, "skills_upstream_max_bytes", "bytes"
            ),
        )
    return RunSettings(
        transport=values("skills_transport"),
        record_mode=values("skills_record"),
        upstream=upstream,
        secret_env=tuple(dict.fromkeys((key_env, "OPENAI_API_KEY", *values("skills_redact_env")))),
        model_name=values("skills_model"),
        match_ignore=tuple(values("skills_match_ignore")),
        model_params=values("skills_model_params"),
        load_mode=values("skills_load_mode"),
    )
