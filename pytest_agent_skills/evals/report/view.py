"""The figures the report shows, computed from the runs: per eval and configuration pass
rates with their spread, deltas, errors and the expectations that failed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..documents.benchmark_model import ConfigurationSummary, EvalVerdict, Stat
from ..verdicts.benchmark import stats
from ..verdicts.results_view import FailingExpectation, failing_expectations
from .values import Benchmark, Run


def stat_of(values: Sequence[float]) -> Stat:
    """Mean, sample standard deviation (0 for one value), min and max; all 0 for none: for a
    folder that does not record them (skill-creator's), computed as benchmark.json's are."""
    return stats(values)


@dataclass(frozen=True)
class Cell:
    """One eval under one configuration (or all evals, for the overall row)."""

    configuration: str
    runs: tuple[Run, ...]
    pass_rate: Stat
    time_seconds: Stat
    tokens: Stat

    @property
    def errors(self) -> int:
        return sum(run.is_error for run in self.runs)

    @property
    def fully_passed(self) -> int:
        return sum(run.outcome == "pass" for run in self.runs)


@dataclass(frozen=True)
class EvalGroup:
    eval_id: int
    name: str
    cells: tuple[Cell, ...]  # in the page's configuration order
    evidence: EvalVerdict | None = None  # the intervals and verdict benchmark.json records


@dataclass(frozen=True)
class BenchmarkView:
    configurations: tuple[str, ...]
    overall: tuple[Cell, ...]
    evals: tuple[EvalGroup, ...]
    errored: tuple[Run, ...]
    failing: dict[int, tuple[FailingExpectation[Run], ...]]  # eval id -> its failing ones
    #: Runs never started (the token budget was spent), left out of every figure.
    skipped: tuple[Run, ...] = ()


def configurations_of(benchmark: Benchmark) -> tuple[str, ...]:
    """run_summary's order (the delta is first minus second), then any other configuration."""
    order = list(benchmark.summary)
    for run in benchmark.runs:
        if run.configuration not in order:
            order.append(run.configuration)
    return tuple(order)


def cell_of(
    configuration: str, runs: Sequence[Run], recorded: ConfigurationSummary | None = None
) -> Cell:
    ordered = tuple(sorted(runs, key=lambda run: (run.eval_id, run.run_number)))
    recorded = recorded or ConfigurationSummary()
    return Cell(
        configuration,
        ordered,
        recorded.pass_rate or stat_of([run.counted_pass_rate for run in ordered]),
        recorded.time_seconds or stat_of([run.result.time_seconds for run in ordered]),
        recorded.tokens or stat_of([float(run.result.tokens) for run in ordered]),
    )


def view_of(benchmark: Benchmark) -> BenchmarkView:
    configurations = configurations_of(benchmark)
    measured = [run for run in benchmark.runs if not run.entry.skipped]
    by_eval: dict[int, list[Run]] = {}
    for run in measured:
        by_eval.setdefault(run.eval_id, []).append(run)
    evals = []
    failing: dict[int, tuple[FailingExpectation[Run], ...]] = {}
    for eval_id in sorted(by_eval):
        runs = by_eval[eval_id]
        evidence = benchmark.evidence.get(eval_id)
        cells = tuple(
            _with_interval(
                cell_of(name, [run for run in runs if run.configuration == name]), evidence
            )
            for name in configurations
            if any(run.configuration == name for run in runs)
        )
        evals.append(EvalGroup(eval_id, runs[0].eval_name, cells, evidence))
        failing[eval_id] = failing_expectations(runs, configurations)
    overall = tuple(
        cell_of(
            name,
            [run for run in measured if run.configuration == name],
            benchmark.summary.get(name),
        )
        for name in configurations
    )
    errored = tuple(
        sorted(
            (run for run in measured if run.is_error),
            key=lambda run: (run.eval_id, configurations.index(run.configuration), run.run_number),
        )
    )
    skipped = tuple(run for run in benchmark.runs if run.entry.skipped)
    return BenchmarkView(configurations, overall, tuple(evals), errored, failing, skipped)


def _with_interval(cell: Cell, evidence: EvalVerdict | None) -> Cell:
    """The cell with the recorded interval of its mean pass rate."""
    recorded = evidence.pass_rate.get(cell.configuration) if evidence else None
    if recorded is None or recorded.ci95 is None:
        return cell
    return replace(cell, pass_rate=cell.pass_rate.model_copy(update={"ci95": recorded.ci95}))
