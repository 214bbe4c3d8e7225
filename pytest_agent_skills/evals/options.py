"""The settings of skill evals and the :class:`EvalOptions` they build, without pytest.

The eval settings have the plugin's names and precedence (flag > environment variable >
configuration file > default); how the model is reached (record mode, upstream, model
name, redaction, matching) are the scenario settings, the same for both.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import settings
from ..errors import ConfigurationError
from ..settings import Setting, SettingValues

if TYPE_CHECKING:
    from ..harness.cassette import Upstream
    from ..redaction import Redactor

#: Record modes of the cassettes (as the scenarios': none, once, new, all).
RECORD_MODES = ("none", "once", "new", "all")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently an upstream answer is asked for again."""

    #: Requests made at most for one answer (the first one included).
    attempts: int = 5
    #: Backoff before the second attempt, in seconds, doubling each time up to ``max_delay``.
    base_delay: float = 0.5
    max_delay: float = 30.0
    #: The longest ``Retry-After`` honoured; a longer one ends the retries.
    max_retry_after: float = 120.0

    def delay(self, attempt: int, headers: Any) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to stop retrying."""
        if attempt >= self.attempts:
            return None
        asked = retry_after(headers)
        if asked is not None:
            return asked if asked <= self.max_retry_after else None
        return float(min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


def retry_after(headers: Any) -> float | None:
    """The wait a ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header asks
    for, or None."""
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(milliseconds) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    with contextlib.suppress(TypeError, ValueError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    return None


EVAL_SETTINGS = settings.declare(
    Setting(
        ini="skills_eval_runs",
        kind="int",
        default=3,
        metavar="N",
        section="evals",
        help="runs of each eval per configuration (with and without the skill)",
    ),
    Setting(
        ini="skills_eval_jobs",
        kind="int",
        default=4,
        metavar="J",
        section="evals",
        help="eval runs (conversations) going on at once",
    ),
    Setting(
        ini="skills_grader_model",
        env="SKILLS_GRADER_MODEL",
        metavar="MODEL",
        section="evals",
        help="model grading the string expectations of evals (default: skills_model), on the"
        " same endpoint",
    ),
    Setting(
        ini="skills_eval_min_pass_rate",
        kind="float",
        default=1.0,
        metavar="RATE",
        section="evals",
        help="the mean pass rate with the skill every eval must reach",
    ),
    Setting(
        ini="skills_eval_threshold",
        kind="float",
        default=0.5,
        metavar="RATE",
        section="evals",
        help="trigger rate from which a trigger query counts as triggering the skill",
    ),
    Setting(
        ini="skills_eval_cassettes",
        metavar="DIR",
        section="evals",
        help="folder of the eval cassettes, a subfolder per skill (default: eval-cassettes in the"
        " folder of the configuration file); never inside a skill folder",
    ),
    Setting(
        ini="skills_eval_attempts",
        kind="int",
        default=RetryPolicy().attempts,
        metavar="N",
        section="evals",
        help="requests made at most for one upstream answer while recording (HTTP 429 and 5xx"
        " are asked again after a backoff honouring Retry-After)",
    ),
)

#: Model turns one eval run may take.
EVAL_MAX_TURNS = 30
DEFAULT_CASSETTES = Path("eval-cassettes")


@dataclass(frozen=True)
class EvalOptions:
    """Everything an eval run needs besides the skill: how many runs, how the model is
    reached, how the grader and the bars judge."""

    runs: int = 3
    jobs: int = 4
    record_mode: str = "none"
    upstream: Upstream | None = None
    model: str = "scripted"
    grader_model: str = ""
    min_pass_rate: float = 1.0
    threshold: float = 0.5
    #: The cassette folder (a subfolder per skill), relative to ``base_dir`` unless absolute.
    cassettes: Path = DEFAULT_CASSETTES
    #: The folder of the configuration file (the current folder without one).
    base_dir: Path = field(default_factory=Path.cwd)
    secret_env: tuple[str, ...] = ("OPENAI_API_KEY",)
    match_ignore: tuple[str, ...] = ()
    load_mode: str = "turn"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_turns: int = EVAL_MAX_TURNS

    @property
    def grader(self) -> str:
        return self.grader_model or self.model

    def redactor(self) -> Redactor:
        from ..redaction import Redactor

        secrets = self.upstream.secrets if self.upstream else ()
        return Redactor(self.secret_env, extra_values=secrets)

    def cassette_dir(self, skill_name: str) -> Path:
        """The folder of one skill's cassettes."""
        return self.base_dir / self.cassettes / skill_name


def eval_options(values: SettingValues) -> EvalOptions:
    """The :class:`EvalOptions` of resolved settings; a bad value is a
    :class:`ConfigurationError` naming where it was set."""
    runs = _whole(values, "skills_eval_runs")
    jobs = _whole(values, "skills_eval_jobs")
    attempts = _whole(values, "skills_eval_attempts")
    for ini in ("skills_eval_min_pass_rate", "skills_eval_threshold"):
        rate = values(ini)
        if not 0 <= rate <= 1:
            raise ConfigurationError(
                f"{values.origin(ini)}: {settings.REGISTRY[ini].flag_name} is a rate from 0 to"
                f" 1, got {rate!r}"
            )
    record_mode = values("skills_record")
    if record_mode not in RECORD_MODES:
        raise ConfigurationError(
            f"{values.origin('skills_record')}: unknown record mode {record_mode!r} (choose"
            f" from {', '.join(RECORD_MODES)})"
        )
    key_env = values("skills_upstream_key_env") or "OPENAI_API_KEY"
    return EvalOptions(
        runs=runs,
        jobs=jobs,
        record_mode=record_mode,
        upstream=upstream(values, key_env),
        model=values("skills_model"),
        grader_model=values("skills_grader_model") or "",
        min_pass_rate=values("skills_eval_min_pass_rate"),
        threshold=values("skills_eval_threshold"),
        cassettes=Path(values("skills_eval_cassettes") or DEFAULT_CASSETTES),
        secret_env=(key_env, "OPENAI_API_KEY", *values("skills_redact_env")),
        match_ignore=tuple(values("skills_match_ignore")),
        load_mode=values("skills_load_mode"),
        retry=RetryPolicy(attempts=attempts),
        base_dir=values.base_dir,
    )


def upstream(values: SettingValues, key_env: str) -> Upstream | None:
    """The endpoint recordings come from (``skills_upstream_url``), or None."""
    from ..harness.cassette import Upstream
    from ..httpbounds import MAX_TOTAL_TIMEOUT

    url = values("skills_upstream_url")
    if not url:
        return None
    return Upstream(
        url,
        os.environ.get(key_env, ""),
        total_timeout=settings.positive_number(
            values, "skills_upstream_timeout", "seconds", at_most=MAX_TOTAL_TIMEOUT
        ),
        max_response_bytes=settings.positive_number(values, "skills_upstream_max_bytes", "bytes"),
    )


def _whole(values: SettingValues, ini: str) -> int:
    number = values(ini)
    if type(number) is not int or number < 1:
        raise ConfigurationError(
            f"{values.origin(ini)}: {settings.REGISTRY[ini].flag_name} must be a whole number of"
            f" at least 1, got {number!r}"
        )
    return number
