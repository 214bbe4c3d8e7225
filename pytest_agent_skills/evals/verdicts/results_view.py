"""One view of a benchmark's results, each result's wording written once here: the terminal
of ``agent-skills eval``, the failure text of a pytest eval item, benchmark.md and report.html
(through benchmark.json's ``notes``) say a pass rate, a bar, the evidence, the errors, the
unsupported passes, the stops and the runs skipped in these words.

The view is computed from the typed benchmark.json (:class:`BenchmarkDocument`), so what the
command prints and the pytest item raises is what the written file says."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..documents.benchmark_model import (
    BenchmarkDocument,
    CalibrationShown,
    EvalVerdict,
    ExpectationVerdict,
    RunEntry,
    Stat,
)
from ..setup.budget import never_started
from .evidence import runs_hint, shown_interval

#: What a benchmark's runs never started are left out of.
COUNTED = "counted in neither pass nor error"

#: What the harness adapted when the grader's endpoint refused a structured output mode.
_ADAPTED_GRADER_OUTPUT = {
    "json_object": "The grader's endpoint refused response_format json_schema: its answers were"
    " asked for as json_object (with the schema beside it)",
    "text": "The grader's endpoint refused response_format (json_schema and json_object): its"
    " answers were asked for as plain text, the JSON object taken from the reply",
}


def delta(first: float, second: float, digits: int) -> str:
    """``first - second`` signed, as benchmark.json, benchmark.md and the report write a
    delta (``+0.50``; never ``-0.00``)."""
    value = round(first - second, digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{value:+.{digits}f}"


def spread(stat: Stat | None, spec: str) -> str:
    """``0.67 ± 0.58``: a mean and its sample standard deviation."""
    stat = stat or Stat()
    return f"{format(stat.mean, spec)} ± {format(stat.stddev, spec)}"


@dataclass(frozen=True)
class EvalView:
    """One eval's results in words."""

    eval_id: int
    name: str
    #: ``with_skill 0.67 ± 0.58, without_skill 0.00 ± 0.00``.
    rates: str
    delta: str
    meets_bar: bool
    problems: tuple[str, ...]
    #: The delta's interval, the verdict and the runs hint.
    evidence: str

    @property
    def bar(self) -> str:
        """``met``, or ``NOT met:`` and why."""
        return "met" if self.meets_bar else "NOT met: " + "; ".join(self.problems)

    def below_bar(self) -> str:
        """The first line of a failing eval's pytest item."""
        return f"eval {self.eval_id} ({self.name}) is below its bar: " + "; ".join(self.problems)


def evidence_hint(verdict: EvalVerdict) -> str:
    """Why there is no interval (when there is none), and how many runs would settle it."""
    note = f"{verdict.verdict_note}; " if verdict.verdict_note else ""
    return note + runs_hint(verdict.runs_for_0_10)


def eval_view(verdict: EvalVerdict) -> EvalView:
    """One eval's verdict of benchmark.json in words."""
    rates = ", ".join(f"{name} {spread(part, '.2f')}" for name, part in verdict.pass_rate.items())
    shown = verdict.verdict + (f" ({verdict.verdict_note})" if verdict.verdict_note else "")
    return EvalView(
        eval_id=verdict.eval_id,
        name=verdict.eval_name or "",
        rates=rates,
        delta=verdict.delta or "",
        meets_bar=bool(verdict.meets_bar),
        problems=tuple(verdict.problems),
        evidence=(
            f"delta {verdict.delta}, 95% interval {shown_interval(verdict.delta_ci95)}:"
            f" {shown}; {runs_hint(verdict.runs_for_0_10)}"
        ),
    )


def noise_floor(floor: CalibrationShown) -> str:
    """An A/A calibration: the verdicts that flip and the interval of the delta."""
    return (
        f"{floor.flipped} of {floor.compared} expectation verdicts flip between with_skill and"
        f" with_skill_repeat; their delta's 95% interval {shown_interval(floor.delta_ci95)}"
    )


@dataclass(frozen=True)
class ResultsView:
    """A benchmark's results in words: each eval's, then what a reader should notice."""

    evals: tuple[EvalView, ...]
    #: Every run, those never started too.
    runs: tuple[RunEntry, ...]
    #: The runs that failed, in the document's order.
    errored: tuple[RunEntry, ...]
    errors: str
    trust_grader: str
    unsupported: str
    same_grader: str
    grader_check: str
    adapted_grader_output: str
    stopped: str
    skipped: str
    #: The expectations that pass in every run of every configuration.
    untelling: tuple[str, ...]
    #: The A/A calibration of the folder, the noise floor; empty without one.
    calibration: str = ""

    @property
    def notes(self) -> list[str]:
        """benchmark.json's ``notes``, which benchmark.md and the report list."""
        found = (
            self.errors,
            self.trust_grader,
            self.unsupported,
            self.same_grader,
            self.grader_check,
            self.adapted_grader_output,
            self.stopped,
            self.skipped,
            *self.untelling,
        )
        return [note for note in found if note]

    def failing(self, eval_id: int) -> tuple[FailingExpectation[RunEntry], ...]:
        """The expectations of an eval that failed in a run (not skipped), most failed
        first."""
        runs = [run for run in self.runs if run.eval_id == eval_id and not run.skipped]
        order = tuple(dict.fromkeys(run.configuration for run in self.runs))
        return failing_expectations(runs, order)

    def first_error(self) -> str:
        """The first failed run and its whole message; empty when none failed."""
        if not self.errored:
            return ""
        first = self.errored[0]
        message = first.error.message if first.error else ""
        return f"first error ({first.run_dir}):\n{message}"


def results_view(document: BenchmarkDocument) -> ResultsView:
    """The view of a benchmark.json document (its notes need not be there yet)."""
    runs, meta = document.runs, document.metadata
    errored = tuple(run for run in runs if run.error is not None)
    errors = ""
    if errored:
        kinds = sorted({run.error.kind for run in errored if run.error})
        errors = (
            f"{len(errored)} of {len(runs)} runs failed ({', '.join(kinds)}): counted as"
            " errors, never as passes"
        )
    unsupported = Counter[str]()
    for run in runs:
        unsupported[run.configuration] += run.result.unsupported
    by_configuration = ", ".join(f"{name} {count}" for name, count in unsupported.items() if count)
    check = meta.grader_check
    stopped_runs = [run for run in runs if run.result.stop_reason and not run.skipped]
    stops = Counter(run.result.stop_reason or "" for run in stopped_runs)
    skipped = sum(run.skipped for run in runs)
    return ResultsView(
        evals=tuple(eval_view(verdict) for verdict in document.evals),
        runs=tuple(runs),
        errored=errored,
        errors=errors,
        trust_grader=(
            "--trust-grader: the grader's passes were taken as it gave them, its quotes not"
            " checked against the runs"
            if meta.trust_grader
            else ""
        ),
        unsupported=(
            f"{unsupported.total()} of the grader's passes were unsupported (none of its quotes"
            f" is in the run): counted as failures ({by_configuration})"
            if by_configuration and not meta.trust_grader
            else ""
        ),
        same_grader=(
            f"Judge and agent are not apart: {meta.same_grader}: a judge of the agent's own"
            " family may favour it; name a grader of another family with --grader-model"
            if meta.same_grader
            else ""
        ),
        grader_check=(
            f"The grader on the gold set ({check['items']} cases): accuracy"
            f" {check['accuracy']:.2f}, false passes {check['false_pass_rate']:.2f}, false"
            f" fails {check['false_fail_rate']:.2f}, unsupported {check['unsupported_rate']:.2f}"
            if check
            else ""
        ),
        adapted_grader_output=_ADAPTED_GRADER_OUTPUT.get(meta.grader_output or "", ""),
        stopped=(
            f"{len(stopped_runs)} of {len(runs)} runs were stopped by a limit"
            f" ({', '.join(f'{reason}: {count}' for reason, count in sorted(stops.items()))}):"
            " failed runs, graded on what they did"
            if stopped_runs
            else ""
        ),
        skipped=never_started(skipped, len(runs), COUNTED) if skipped else "",
        untelling=_untelling(document),
        calibration=noise_floor(document.calibration) if document.calibration else "",
    )


def _untelling(document: BenchmarkDocument) -> tuple[str, ...]:
    """Expectations that pass in every graded run of every configuration: they may not tell
    what the skill is worth."""
    if len(document.metadata.configurations or ()) < 2:
        return ()
    verdicts: dict[str, set[bool]] = {}
    for run in document.runs:
        for item in run.expectations or ():
            found = verdicts.setdefault(item.text, set())
            if run.error is None:
                found.add(item.passed)
    return tuple(
        f"Expectation {text!r} passes in every run of every configuration: it may not tell the"
        " skill's value"
        for text, found in verdicts.items()
        if found == {True}
    )


def run_table(runs: Sequence[RunEntry]) -> str:
    """The per-run table: benchmark.md's, the errors of the command, the failure text of a
    pytest eval item."""
    lines = [
        "| eval | configuration | run | passed | time (s) | tokens | tool calls | error or stop |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        result, error = run.result, run.error
        shown = f"{error.kind}: {error.message.splitlines()[0][:120]}" if error else ""
        if run.skipped:
            shown = f"skipped ({result.stop_reason})"
        elif result.stop_reason:
            shown = f"stopped ({result.stop_reason})"
        lines.append(
            f"| {run.eval_id} | {run.configuration} | {run.run_number} |"
            f" {result.passed}/{result.total} | {result.time_seconds:.1f} |"
            f" {result.tokens} | {result.tool_calls} | {shown} |"
        )
    return "\n".join(lines)


class GradedRun(Protocol):
    """A run with its expectations judged: benchmark.json's entry, or the report's run (whose
    expectations may come from its grading.json)."""

    @property
    def configuration(self) -> str: ...

    @property
    def run_number(self) -> int: ...

    @property
    def expectations(self) -> Sequence[ExpectationVerdict] | None: ...


R = TypeVar("R", bound=GradedRun)


@dataclass(frozen=True)
class Evidence(Generic[R]):
    """What the grader said of a failed expectation, and the runs it said it of."""

    text: str
    runs: tuple[R, ...]


@dataclass(frozen=True)
class FailingExpectation(Generic[R]):
    """An expectation that failed in some run."""

    text: str
    #: Per configuration: the runs it failed in, of the runs that graded it.
    failed: dict[str, tuple[int, int]]
    evidence: tuple[Evidence[R], ...]

    @property
    def failed_in(self) -> str:
        """``failed in 2/3 with_skill, 3/3 without_skill``."""
        counts = (f"{failed}/{graded} {name}" for name, (failed, graded) in self.failed.items())
        return "failed in " + ", ".join(counts)


def failing_expectations(
    runs: Sequence[R], configurations: Sequence[str]
) -> tuple[FailingExpectation[R], ...]:
    """Each expectation text that failed in some run, most failed first, with its evidence."""
    graded: dict[str, dict[str, list[bool]]] = {}
    evidence: dict[str, dict[str, list[R]]] = {}
    for run in sorted(
        runs, key=lambda run: (configurations.index(run.configuration), run.run_number)
    ):
        for expectation in run.expectations or ():
            graded.setdefault(expectation.text, {}).setdefault(run.configuration, []).append(
                expectation.passed
            )
            if not expectation.passed:
                evidence.setdefault(expectation.text, {}).setdefault(
                    expectation.evidence, []
                ).append(run)
    found = []
    for text, per_configuration in graded.items():
        if text not in evidence:
            continue
        failed = {
            name: (outcomes.count(False), len(outcomes))
            for name in configurations
            if (outcomes := per_configuration.get(name))
        }
        found.append(
            FailingExpectation(
                text,
                failed,
                tuple(Evidence(said, tuple(by)) for said, by in evidence[text].items()),
            )
        )
    found.sort(key=lambda item: -sum(count for count, _ in item.failed.values()))
    return tuple(found)
