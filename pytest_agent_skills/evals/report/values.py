"""The plain values the report renders, read from an eval output folder by
:mod:`.folder`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunError:
    kind: str
    message: str


@dataclass(frozen=True)
class Expectation:
    text: str
    passed: bool
    evidence: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # as the model sent them (JSON text, pretty-printed when it parses)
    result: str | None  # the tool message's content; None when no result was recorded


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Transcript:
    prompt: str
    messages: tuple[Message, ...]
    final_text: str
    error: RunError | None
    total_tokens: int | None


@dataclass(frozen=True)
class OutputFile:
    path: str  # relative to the run's outputs/, with "/"
    size: int
    kind: str  # "text", "binary", "symlink", "over-budget"
    text: str = ""  # shown content (text files), at most OUTPUT_TEXT_LIMIT characters
    truncated: bool = False


@dataclass(frozen=True)
class Run:
    eval_id: int
    eval_name: str
    configuration: str
    run_number: int
    pass_rate: float
    passed: int
    total: int
    time_seconds: float
    tokens: int
    tool_calls: int
    errors: int
    error: RunError | None
    expectations: tuple[Expectation, ...]
    notes: tuple[str, ...]
    run_dir: str
    found: bool  # the run folder exists
    transcript: Transcript | None
    outputs: tuple[OutputFile, ...]
    outputs_omitted: int  # files past OUTPUT_FILES_LIMIT
    #: Never started (the eval's token budget was spent): neither a pass nor an error.
    skipped: bool = False
    #: Why the run stopped before its end (turn_limit, run_tokens, budget), or "".
    stop_reason: str = ""

    @property
    def is_error(self) -> bool:
        return self.error is not None or self.errors > 0

    @property
    def outcome(self) -> str:
        """``skipped`` (never started), ``error`` (never a pass, whatever was graded),
        ``pass`` (every expectation met) or ``fail``."""
        if self.skipped:
            return "skipped"
        if self.is_error:
            return "error"
        return "pass" if self.total and self.passed == self.total else "fail"

    @property
    def counted_pass_rate(self) -> float:
        """The pass rate the summaries use: an errored run is never a pass."""
        return 0.0 if self.is_error else self.pass_rate


Interval = tuple[float, float]


@dataclass(frozen=True)
class Stat:
    mean: float
    stddev: float
    min: float
    max: float
    ci95: Interval | None = None  # the 95% interval of the mean, when recorded


@dataclass(frozen=True)
class Flaky:
    """An expectation that passed in some runs of a configuration and failed in others."""

    text: str
    configuration: str
    passed: int
    runs: int


@dataclass(frozen=True)
class Disagreement:
    """An expectation the gradings of one run split on (``--grader-runs``)."""

    text: str
    configuration: str
    run_number: int
    passed: int
    gradings: int


@dataclass(frozen=True)
class EvalEvidence:
    """benchmark.json's evidence fields of one eval (``evals[i]``)."""

    ci95: dict[str, Interval | None]  # configuration -> interval of its mean pass rate
    delta_ci95: Interval | None
    verdict: str
    verdict_note: str
    runs_for_0_10: int | None
    flaky: tuple[Flaky, ...]
    noise_floor: Interval | None = None  # this eval's A/A delta interval, when calibrated
    disagreements: tuple[Disagreement, ...] = ()


@dataclass(frozen=True)
class Verdicts:
    """The verdicts recorded in benchmark.json (absent from older files: all empty)."""

    evals: dict[int, EvalEvidence]
    all_met: dict[str, Interval | None]  # configuration -> Wilson interval of all met
    overall_delta: Interval | None = None
    overall_verdict: str = ""
    method: str = ""
    #: The A/A noise floor: the delta interval of with_skill against its repeat, and the
    #: share of expectation verdicts that flipped between them.
    floor: Interval | None = None
    flip_share: float | None = None


@dataclass(frozen=True)
class ModelFigures:
    """One model's figures of one eval (or of every eval) in models.json."""

    with_skill: float
    with_skill_ci95: Interval | None
    delta: str
    delta_ci95: Interval | None
    verdict: str
    tokens: float
    time_seconds: float


@dataclass(frozen=True)
class ModelsOverview:
    """models.json: the same evals on several models."""

    skill_name: str
    models: tuple[str, ...]
    folders: dict[str, str]  # model -> its output folder below this one
    overall: dict[str, ModelFigures]
    evals: tuple[tuple[int, str, dict[str, ModelFigures]], ...]  # id, name, model -> figures


@dataclass(frozen=True)
class Benchmark:
    metadata: dict[str, str]  # shown as is, in file order
    runs: tuple[Run, ...]
    summary: dict[str, dict[str, Stat]]  # configuration -> metric -> figures, file order
    delta: dict[str, str]
    notes: tuple[str, ...]
    verdicts: Verdicts = Verdicts({}, {})


@dataclass(frozen=True)
class TriggerResult:
    query: str
    should_trigger: bool
    trigger_rate: float
    triggers: int
    runs: int
    passed: bool
    errors: int = 0  # runs that errored (never counted as a trigger)
    error_messages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Triggers:
    skill_name: str
    description: str
    model: str
    threshold: float | None
    results: tuple[TriggerResult, ...]
    total: int
    passed: int
    failed: int
    #: Where the model's commands ran ("" in a folder written before it was recorded).
    runtime: str = ""


@dataclass(frozen=True)
class MatrixQuery:
    query: str
    owner: str
    should_trigger: bool
    runs: int
    loaded: dict[str, int]  # skill (or "none") -> runs that loaded it first
    errors: int


@dataclass(frozen=True)
class SkillScore:
    name: str
    precision: float | None  # None: nothing to measure it on
    recall: float | None
    false_triggers: dict[str, int]  # another skill -> runs of this skill's queries it took
    own_false_triggers: int = 0  # runs of this skill's should-not queries that loaded it


@dataclass(frozen=True)
class Collision:
    a: str
    b: str
    count: int
    a_took_b: int
    b_took_a: int


@dataclass(frozen=True)
class Matrix:
    """triggers-matrix.json: which skill each query loaded, with every skill offered."""

    skills: tuple[str, ...]
    model: str
    runs_per_query: int
    queries: tuple[MatrixQuery, ...]
    scores: tuple[SkillScore, ...]
    collisions: tuple[Collision, ...]
    min_recall: float | None
    min_precision: float | None
    below_bar: tuple[str, ...]
    errors: int = 0
    #: Runs never started: the token budget was spent (judged nowhere, not errors).
    runs_skipped: int = 0
    #: The wall time the matrix took (None in a file written before it was recorded).
    time_seconds: float | None = None


@dataclass(frozen=True)
class Candidate:
    iteration: int
    description: str
    train: tuple[int, int] | None  # (passed, total); None for a candidate refused unscored
    test: tuple[int, int] | None
    refused: str


@dataclass(frozen=True)
class Candidates:
    """description-candidates.json: the descriptions the improvement loop tried."""

    skill_name: str
    original: str
    holdout: float | None
    seed: int | None
    candidates: tuple[Candidate, ...]
    best: str


@dataclass(frozen=True)
class ReportFolder:
    path: Path
    benchmark: Benchmark | None
    triggers: Triggers | None
    matrix: Matrix | None = None
    candidates: Candidates | None = None
    models: ModelsOverview | None = None
