"""The settings of skill evals and the :class:`EvalOptions` they build, without pytest.

The eval settings have the plugin's names and precedence (flag > environment variable >
configuration file > default); how the model is reached (record mode, upstream, model
name, redaction, matching) are the scenario settings, the same for both.
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import settings
from ...config.runtimes import RuntimeOptions
from ...errors import ConfigurationError
from ...request_params import checked_params
from ...settings import SettingValues
from .eval_settings import DEFAULT_ATTEMPTS, DEFAULT_MAX_TURNS

if TYPE_CHECKING:
    from ...harness.cassette import Upstream
    from ...harness.run_settings import RunSettings


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently an upstream answer is asked for again."""

    #: Requests made at most for one answer (the first one included).
    attempts: int = DEFAULT_ATTEMPTS
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


DEFAULT_CASSETTES = Path("eval-cassettes")


@dataclass(frozen=True)
class EvalOptions:
    """Everything an eval run needs besides the skill: how many runs, how the model is
    reached, how the grader and the bars judge."""

    #: How the model is reached, what is recorded and hidden (the scenarios' settings); its
    #: ``model_name`` is the agent's model.  None: ``RunSettings()``, replaying.
    run: RunSettings | None = None
    runs: int = 3
    jobs: int = 4
    grader_model: str = ""
    min_pass_rate: float = 1.0
    #: ``better``: an eval passes only with the verdict ``better`` (``none``: no such gate).
    require: str = "none"
    threshold: float = 0.5
    #: The cassette folder (a subfolder per skill), relative to ``base_dir`` unless absolute.
    cassettes: Path = DEFAULT_CASSETTES
    #: The folder of the configuration file (the current folder without one).
    base_dir: Path = field(default_factory=Path.cwd)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: Model turns one eval run may take.
    max_turns: int = DEFAULT_MAX_TURNS
    #: Grade the recorded conversations again: the agent's cassettes replay (never an agent
    #: request), the grader's exchanges go to their own cassettes (``regrade/``).
    regrade: bool = False
    #: The agent models to run the evals on, one after the other (several: one output and
    #: cassette folder each); empty: the run settings' model alone.
    models: tuple[str, ...] = ()
    #: The subfolder of this model's cassettes below the skill's (several models).
    model_folder: str = ""
    #: The most tokens one run's requests may use (None: no cap); past it the run stops.
    max_run_tokens: int | None = None
    #: The tokens the whole eval may use (None: no budget); once spent, no run starts.
    max_tokens: int | None = None
    #: Offer skills whose front matter is invalid (else they stop the run before a request).
    allow_invalid_skills: bool = False
    #: Gradings of each run's transcript (several: the grader's agreement with itself).
    grader_runs: int = 1
    #: Fields added to every grader request (the agent's are ``run.model_params``).
    grader_params: Mapping[str, Any] = field(default_factory=dict)
    #: The grader's passes taken without checking its quotes against the run.
    trust_grader: bool = False
    #: ``require`` ``better`` allowed with a grader of the agent's own model or family.
    allow_same_grader: bool = False
    #: The grader tested on the gold set before the evals (see :mod:`.grader_check`).
    grader_check: bool = False
    #: The highest false-pass rate on the gold set that ``grader-check`` accepts.
    max_false_pass: float = 0.1
    #: Where the model's commands run: a runtime's name, or None for the first isolated one
    #: available (see :mod:`.eval_runtime`); a runtime in ``run`` is used as it is.
    runtime: str | None = None
    #: How that runtime is made (its work root, Docker image, staging).
    workspaces: RuntimeOptions = field(default_factory=RuntimeOptions)

    def __post_init__(self) -> None:
        if self.run is None:
            from ...harness.run_settings import RunSettings

            object.__setattr__(self, "run", RunSettings())
        object.__setattr__(
            self, "grader_params", checked_params(self.grader_params, "grader_params")
        )

    @property
    def settings(self) -> RunSettings:
        assert self.run is not None  # set by __post_init__
        return self.run

    @property
    def record_mode(self) -> str:
        return self.settings.record_mode

    @property
    def upstream(self) -> Upstream | None:
        return self.settings.upstream

    @property
    def model(self) -> str:
        return self.settings.model_name

    @property
    def grader(self) -> str:
        return self.grader_model or self.model

    def cassette_dir(self, skill_name: str) -> Path:
        """The folder of one skill's cassettes (of one model's, with several)."""
        folder = self.base_dir / self.cassettes / skill_name
        return folder / self.model_folder if self.model_folder else folder


def eval_options(values: SettingValues) -> EvalOptions:
    """The :class:`EvalOptions` of resolved settings; a bad value is a
    :class:`ConfigurationError` naming where it was set."""
    runs = _whole(values, "skills_eval_runs")
    jobs = _whole(values, "skills_eval_jobs")
    attempts = _whole(values, "skills_eval_attempts")
    max_turns = _whole(values, "skills_eval_max_turns")
    max_run_tokens, max_tokens = (
        None if values(ini) is None else _whole(values, ini)
        for ini in ("skills_eval_max_run_tokens", "skills_eval_max_tokens")
    )
    min_pass_rate, threshold, max_false_pass = rates(
        values,
        "skills_eval_min_pass_rate",
        "skills_eval_threshold",
        "skills_grader_check_max_false_pass",
    )
    from ...config.runs import run_settings
    from ...config.runtimes import runtime_options

    options = EvalOptions(
        run=run_settings(values),
        runs=runs,
        jobs=jobs,
        grader_model=values("skills_grader_model") or "",
        grader_params=values("skills_grader_params"),
        min_pass_rate=min_pass_rate,
        require=values("skills_eval_require"),
        models=tuple(values("skills_eval_models") or ()),
        grader_runs=_whole(values, "skills_eval_grader_runs"),
        threshold=threshold,
        cassettes=Path(values("skills_eval_cassettes") or DEFAULT_CASSETTES),
        retry=RetryPolicy(attempts=attempts),
        base_dir=values.base_dir,
        runtime=values("skills_eval_runtime") or None,
        workspaces=runtime_options(values),
        max_turns=max_turns,
        max_run_tokens=max_run_tokens,
        max_tokens=max_tokens,
        allow_invalid_skills=values("skills_eval_allow_invalid"),
        trust_grader=values("skills_eval_trust_grader"),
        allow_same_grader=values("skills_eval_allow_same_grader"),
        grader_check=values("skills_eval_grader_check"),
        max_false_pass=max_false_pass,
    )
    refused_same_grader(options, values)
    return options


def refused_same_grader(options: EvalOptions, values: SettingValues) -> None:
    """A :class:`ConfigurationError` when ``require`` is ``better`` and a grader judges its
    own model or family (see :mod:`.judges`), unless ``allow_same_grader``."""
    from .judges import same_grader

    if options.require != "better" or options.allow_same_grader:
        return
    for model in options.models or (options.model,):
        kinship = same_grader(model, options.grader)
        if kinship:
            raise ConfigurationError(
                f"{values.origin('skills_eval_require')}: --require better with {kinship}: a"
                " judge of its own family may favour it; name a grader of another family"
                " (--grader-model) or allow it with --allow-same-grader"
                " (skills_eval_allow_same_grader)"
            )


def rates(values: SettingValues, *inis: str) -> list[float]:
    """The values of the rate settings ``inis``; one outside 0..1 is a
    :class:`ConfigurationError` naming where it was set."""
    for ini in inis:
        rate = values(ini)
        if not 0 <= rate <= 1:
            raise ConfigurationError(
                f"{values.origin(ini)}: {settings.REGISTRY[ini].flag_name} is a rate from 0 to"
                f" 1, got {rate!r}"
            )
    return [values(ini) for ini in inis]


def _whole(values: SettingValues, ini: str) -> int:
    number = values(ini)
    if type(number) is not int or number < 1:
        raise ConfigurationError(
            f"{values.origin(ini)}: {settings.REGISTRY[ini].flag_name} must be a whole number of"
            f" at least 1, got {number!r}"
        )
    return number
