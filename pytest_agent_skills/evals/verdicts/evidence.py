"""The evidence fields of benchmark.json: 95% intervals of pass rates and of the delta, a
verdict per eval, the runs an interval of ±0.10 would take, and flaky expectations.

They are added beside skill-creator's fields, never in their place.  Only graded runs count:
an errored run (its expectations were never judged) and a run skipped for the budget are
left out of every interval, and counted in ``runs_excluded``.  The statistics themselves
are :mod:`.stats`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..run.run_result import EvalRunResult
from . import stats

BETTER, WORSE, INCONCLUSIVE = "better", "worse", "inconclusive"


def is_counted(run: EvalRunResult) -> bool:
    """Whether a run's pass rate is evidence: graded, neither errored nor skipped."""
    return run.error is None and not run.skipped


def graded_rates(runs: Sequence[EvalRunResult], configuration: str) -> list[float]:
    return [
        run.pass_rate for run in runs if run.key.configuration == configuration and is_counted(run)
    ]


def _interval(interval: stats.Interval | None) -> tuple[float, float] | None:
    return None if interval is None else interval.rounded()


def all_met(runs: Sequence[EvalRunResult]) -> tuple[float, float] | None:
    """The Wilson interval of the share of graded runs that met every expectation."""
    counted = [run for run in runs if is_counted(run)]
    met = sum(1 for run in counted if run.total and run.passed == run.total)
    return _interval(stats.wilson(met, len(counted)) if len(counted) > 1 else None)


def excluded(runs: Sequence[EvalRunResult]) -> dict[str, int]:
    """How many runs the intervals leave out, and why."""
    skipped = sum(run.skipped for run in runs)
    errors = sum(1 for run in runs if run.error is not None and not run.skipped)
    return {"errors": errors, "skipped": skipped}


def summary_evidence(runs: Sequence[EvalRunResult]) -> dict[str, Any]:
    """The added fields of ``run_summary[configuration]``'s pass rate over every eval (``runs``:
    the configuration's): the pooled interval (stratified by eval) of the mean pass rate, the
    runs it counts and those it leaves out."""
    strata = [
        [run.pass_rate for run in runs if run.key.eval_id == eval_id and is_counted(run)]
        for eval_id in dict.fromkeys(run.key.eval_id for run in runs)
    ]
    return {
        "ci95": _interval(stats.pooled_mean_interval(strata)),
        "runs_counted": sum(len(rates) for rates in strata),
        "runs_excluded": excluded(runs),
    }


def verdict_of(interval: stats.Interval | None) -> str:
    """``better`` or ``worse`` only when the delta's interval excludes 0."""
    if interval is None or not interval.excludes(0.0):
        return INCONCLUSIVE
    return BETTER if interval.low > 0 else WORSE


def eval_evidence(runs: Sequence[EvalRunResult], configurations: Sequence[str]) -> dict[str, Any]:
    """One eval's added fields: per configuration the interval of its mean and of all met,
    the delta's interval (first configuration minus the second), the verdict, the runs hint
    and the flaky expectations."""
    first, second = configurations
    rates = {name: graded_rates(runs, name) for name in configurations}
    interval = stats.difference_interval(rates[first], rates[second])
    few = [name for name in configurations if len(rates[name]) < 2]
    note = ""
    if few:
        note = (
            "no interval: "
            + ", ".join(f"{name} has {len(rates[name])} graded run(s)" for name in few)
            + "; an interval needs 2 or more per configuration"
        )
    return {
        "ci95": {name: _interval(stats.mean_interval(rates[name])) for name in configurations},
        "all_met_ci95": {
            name: all_met([run for run in runs if run.key.configuration == name])
            for name in configurations
        },
        "runs_counted": {name: len(rates[name]) for name in configurations},
        "runs_excluded": {
            name: excluded([run for run in runs if run.key.configuration == name])
            for name in configurations
        },
        "delta_ci95": _interval(interval),
        "verdict": verdict_of(interval),
        "verdict_note": note,
        "runs_for_0_10": stats.runs_for(rates[first], rates[second]),
        "flaky": flaky(runs, configurations),
        "grader_disagreements": disagreements(runs),
    }


def overall_evidence(
    runs: Sequence[EvalRunResult], configurations: Sequence[str]
) -> dict[str, Any]:
    """Every eval together: the delta's interval stratified by eval, and its verdict."""
    first, second = configurations
    eval_ids = dict.fromkeys(run.key.eval_id for run in runs)
    strata = [
        (
            graded_rates([run for run in runs if run.key.eval_id == eval_id], first),
            graded_rates([run for run in runs if run.key.eval_id == eval_id], second),
        )
        for eval_id in eval_ids
    ]
    interval = stats.pooled_difference(strata)
    return {
        "configurations": [first, second],
        "delta_ci95": _interval(interval),
        "verdict": verdict_of(interval),
        "method": METHOD,
    }


METHOD = (
    "95% intervals: Student's t over graded runs' pass rates (Wilson for pass/fail runs);"
    " delta by Welch's t (Welch-Satterthwaite df), Newcombe's hybrid score for pass/fail runs;"
    " pooled evals stratified by eval"
)


def disagreements(runs: Sequence[EvalRunResult]) -> list[dict[str, Any]]:
    """Expectations the gradings of one run disagreed on (``--grader-runs``)."""
    return [
        {
            "text": item.text,
            "configuration": run.key.configuration,
            "run_number": run.key.run_number,
            "passed": item.grader_agreement["passed"],
            "gradings": item.grader_agreement["gradings"],
        }
        for run in runs
        if is_counted(run)
        for item in run.expectations
        if (split := item.grader_agreement) and 0 < split["passed"] < split["gradings"]
    ]


def flaky(runs: Sequence[EvalRunResult], configurations: Sequence[str]) -> list[dict[str, Any]]:
    """Expectations that pass in some graded runs of a configuration and fail in others."""
    found = []
    for name in configurations:
        mine = [run for run in runs if run.key.configuration == name and is_counted(run)]
        texts = dict.fromkeys(item.text for run in mine for item in run.expectations)
        for text in texts:
            verdicts = [
                item.passed for run in mine for item in run.expectations if item.text == text
            ]
            passed = sum(verdicts)
            if 0 < passed < len(verdicts):
                found.append(
                    {"text": text, "configuration": name, "passed": passed, "runs": len(verdicts)}
                )
    return found


def shown_interval(interval: Sequence[float] | None) -> str:
    """``[-0.10, +0.60]``, or ``no interval``."""
    if interval is None:
        return "no interval"
    low, high = interval
    return f"[{low:+.2f}, {high:+.2f}]"


def runs_hint(needed: int | None) -> str:
    """The hint of an eval's evidence: how many runs would settle it (``runs_for_0_10``)."""
    if needed is None:
        return "run at least 2 graded runs per configuration to see an interval (--runs)"
    more = "at least " if needed >= stats.MOST_RUNS else ""
    return (
        f"{more}{needed} runs per configuration would bring the interval to ±0.10 at the spread"
        f" observed (--runs {needed})"
    )


def gate_problem(found: dict[str, Any], configurations: Sequence[str]) -> str:
    """Why an eval fails ``--require better``: the verdict, the interval and the hint."""
    first, second = configurations
    why = found["verdict_note"] or (
        "its interval contains 0" if found["verdict"] == INCONCLUSIVE else "its interval is below 0"
    )
    hint = runs_hint(found["runs_for_0_10"])
    return (
        f"--require better: the verdict is {found['verdict']}, not better ({first} - {second}"
        f" 95% interval {shown_interval(found['delta_ci95'])}: {why}); {hint}"
    )
