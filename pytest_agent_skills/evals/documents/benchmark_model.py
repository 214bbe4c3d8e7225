"""benchmark.json: skill-creator's shape (``metadata``, ``runs``, ``run_summary``, ``notes``)
with the evidence fields beside its own (``evals``, ``overall``, ``calibration``), never in
their place: its viewer and aggregate_benchmark.py keep reading our folders."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...typed_documents import Document, Interval, Open, Part

#: How a run failed: the model's endpoint, the grader, the harness, or a stop (Ctrl-C).
ErrorKind = Literal["model", "grading", "harness", "interrupted"]
#: A configuration name (with_skill, without_skill, baseline, with_skill_repeat).
CONFIGURATION = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class RunErrorRecord(Part):
    """Why a run gave no verdict of its own."""

    kind: ErrorKind
    message: str = ""


class ExpectationVerdict(Part):
    """One expectation judged (grading.json's ``expectations[]``)."""

    text: str
    passed: bool
    evidence: str = ""
    quotes: list[str] = Field(
        default_factory=list, description="the grader's verbatim excerpts of the run"
    )
    supported: bool | None = Field(
        default=None, description="whether every quote was found in the run (null: unchecked)"
    )
    grader_agreement: dict[str, Any] | None = Field(
        default=None, description="with --grader-runs: {passed, gradings, agreement}"
    )


class RunFigures(Part):
    """A run's ``result``: skill-creator's figures and ours."""

    pass_rate: float
    passed: int = 0
    failed: int = 0
    total: int = 0
    time_seconds: float = 0.0
    tokens: int = 0
    tool_calls: int = 0
    errors: int = 0
    stop_reason: str | None = Field(
        default=None, description="turn_limit, run_tokens or budget; empty when none"
    )
    unsupported: int = Field(default=0, description="passes without a quote found in the run")


class RunEntry(Part):
    """One run of ``runs[]``."""

    eval_id: int
    eval_name: str | None = None
    configuration: str = Field(pattern=CONFIGURATION)
    run_number: int
    result: RunFigures
    expectations: list[ExpectationVerdict] | None = None
    error: RunErrorRecord | None = None
    skipped: bool = False
    run_dir: str | None = Field(
        default=None, description="eval-<id>/<configuration>/run-<n>, inside the folder"
    )
    notes: list[str] = Field(default_factory=list)


class Stat(Part):
    """``{mean, stddev, min, max}`` of one metric, with our interval and counts."""

    mean: float = 0.0
    stddev: float = 0.0
    min: float = 0.0
    max: float = 0.0
    ci95: Interval | None = None
    runs_counted: int | None = None
    runs_excluded: dict[str, int] | None = None


class ConfigurationSummary(Part):
    """``run_summary[configuration]``: each metric's figures."""

    pass_rate: Stat | None = None
    time_seconds: Stat | None = None
    tokens: Stat | None = None
    unsupported_passes: int = 0
    all_met_ci95: Interval | None = None


class Delta(Part):
    """``run_summary.delta``: first configuration's mean minus the second's, signed text."""

    pass_rate: str | None = None
    time_seconds: str | None = None
    tokens: str | None = None


class Flaky(Part):
    """An expectation that passed in some runs of a configuration and failed in others."""

    text: str
    configuration: str
    passed: int
    runs: int


class Disagreement(Part):
    """An expectation the gradings of one run split on (``--grader-runs``)."""

    text: str
    configuration: str
    run_number: int
    passed: int
    gradings: int


class EvalVerdict(Part):
    """One eval's verdict of ``evals[]``."""

    eval_id: int
    eval_name: str | None = None
    pass_rate: dict[str, Stat] = Field(default_factory=dict)
    delta: str | None = None
    errors: int = 0
    skipped: int = 0
    unsupported_passes: dict[str, int] = Field(default_factory=dict)
    meets_bar: bool | None = None
    problems: list[str] = Field(default_factory=list)
    all_met_ci95: dict[str, Interval | None] = Field(default_factory=dict)
    runs_counted: dict[str, int] = Field(default_factory=dict)
    runs_excluded: dict[str, dict[str, int]] = Field(default_factory=dict)
    delta_ci95: Interval | None = None
    verdict: str = ""
    verdict_note: str = ""
    runs_for_0_10: int | None = None
    flaky: list[Flaky] = Field(default_factory=list)
    grader_disagreements: list[Disagreement] = Field(default_factory=list)
    noise_floor_ci95: Interval | None = None


class Overall(Part):
    """Every eval together: the delta's interval stratified by eval, and its verdict."""

    configurations: list[str] = Field(default_factory=list)
    delta_ci95: Interval | None = None
    verdict: str = ""
    method: str = ""


class CalibrationShown(Part):
    """What a benchmark carries of its calibration (calibration.json)."""

    timestamp: str | None = None
    flipped: int | None = None
    compared: int | None = None
    flip_share: float | None = None
    flip_share_ci95: Interval | None = None
    delta_ci95: Interval | None = None


class GitVersion(Part):
    """An earlier version of the skill taken from git (``--baseline git:REF``)."""

    ref: str
    commit: str


class Metadata(Open):
    """Who ran what: skill-creator's fields and ours; other tools' fields are kept."""

    skill_name: str | None = None
    skill_path: str | None = None
    executor_model: str | None = None
    grader_model: str | None = None
    grader_output: str | None = None
    timestamp: str | None = None
    evals_run: list[int] | None = None
    runs_per_configuration: int | None = None
    configurations: list[str] | None = None
    min_pass_rate: float | None = None
    require: str | None = None
    regraded: bool | None = None
    runtime: str | None = None
    runs_skipped: int | None = None
    baseline: GitVersion | None = Field(
        default=None, description="with --baseline git:REF: the ref and commit of the baseline"
    )
    trust_grader: bool | None = None
    same_grader: str | None = None
    grader_check: dict[str, Any] | None = Field(
        default=None, description="the grader's figures on the gold set (grader-check.json)"
    )


class BenchmarkDocument(Document):
    """benchmark.json of ``agent-skills eval``."""

    NAME = "benchmark"

    metadata: Metadata = Field(default_factory=Metadata)
    runs: list[RunEntry]
    run_summary: dict[str, ConfigurationSummary | Delta] = Field(
        default_factory=dict, description="per configuration, and 'delta'"
    )
    evals: list[EvalVerdict] = Field(default_factory=list)
    overall: Overall | None = None
    notes: list[str] = Field(default_factory=list)
    calibration: CalibrationShown | None = None
