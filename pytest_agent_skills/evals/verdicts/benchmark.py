"""benchmark.json and benchmark.md: every run, the summary per configuration (mean, sample
standard deviation, min, max), the delta, and whether each eval meets its bar."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from ..documents.benchmark_model import (
    BenchmarkDocument,
    ConfigurationSummary,
    Delta,
    EvalVerdict,
    Metadata,
    Overall,
    RunEntry,
    Stat,
)
from ..run.run_result import EvalRunResult
from . import evidence
from .results_view import delta, results_view

WITH_SKILL, WITHOUT_SKILL, BASELINE = "with_skill", "without_skill", "baseline"
WITH_SKILL_REPEAT = "with_skill_repeat"


def stats(values: Sequence[float], digits: int | None = None, **evidence: Any) -> Stat:
    """``{mean, stddev, min, max}``; the sample standard deviation (0 for one value); all 0
    for none. Rounded to ``digits`` (as benchmark.json writes them), or as computed; with the
    ``evidence`` fields given (:mod:`.evidence`)."""
    if not values:
        return Stat(mean=0.0, stddev=0.0, min=0.0, max=0.0, **evidence)
    figures: dict[str, Any] = {
        "mean": statistics.fmean(values),
        "stddev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }
    if digits is not None:
        figures = {name: round(value, digits) for name, value in figures.items()}
    return Stat(**figures, **evidence)


def _summary(runs: Sequence[EvalRunResult], name: str) -> ConfigurationSummary:
    """``run_summary[name]``: the figures of its runs that were made, and the evidence of
    every one (:func:`.evidence.summary_evidence`)."""
    mine = [run for run in runs if run.key.configuration == name]
    measured = [run for run in mine if not run.skipped]
    return ConfigurationSummary(
        pass_rate=stats([run.pass_rate for run in measured], 4, **evidence.summary_evidence(mine)),
        time_seconds=stats([run.time_seconds for run in measured], 3),
        tokens=stats([float(run.tokens) for run in measured], 1),
        unsupported_passes=sum(run.unsupported for run in measured),
        all_met_ci95=evidence.all_met(mine),
    )


def eval_verdicts(meta: Metadata, runs: Sequence[EvalRunResult]) -> list[EvalVerdict]:
    """Per eval: each configuration's pass rate (with its interval), the delta, the evidence
    fields (:mod:`.evidence`) and whether the eval meets its bar (the mean pass rate with the
    skill at least ``min_pass_rate``; with a baseline, a delta that is not negative; with
    ``require``, the verdict ``better``)."""
    configurations, bar = meta.configurations or [], meta.min_pass_rate or 0.0
    verdicts = []
    for eval_id in dict.fromkeys(run.key.eval_id for run in runs):
        listed = [run for run in runs if run.key.eval_id == eval_id]
        mine = [run for run in listed if not run.skipped]
        found = evidence.eval_evidence(mine, configurations)
        intervals = found.pop("ci95")
        rates = {
            name: stats(
                [run.pass_rate for run in mine if run.key.configuration == name],
                4,
                ci95=intervals[name],
            )
            for name in configurations
        }
        first, second = configurations
        difference = rates[first].mean - rates[second].mean
        problems = []
        if not any(run.key.configuration == WITH_SKILL for run in mine):
            problems.append(
                "no run with the skill was measured: the token budget (--max-tokens) was spent"
                " first"
            )
        elif rates[WITH_SKILL].mean < bar:
            problems.append(
                f"the mean pass rate with the skill {rates[WITH_SKILL].mean:.2f} is below {bar:.2f}"
            )
        if second == BASELINE and difference < 0:
            problems.append(f"the skill does worse than the baseline ({difference:+.2f})")
        if meta.require == evidence.BETTER and found["verdict"] != evidence.BETTER:
            problems.append(evidence.gate_problem(found, configurations))
        verdicts.append(
            EvalVerdict(
                eval_id=eval_id,
                eval_name=listed[0].eval_name,
                pass_rate=rates,
                delta=delta(rates[first].mean, rates[second].mean, 2),
                errors=sum(1 for run in mine if run.error),
                skipped=len(listed) - len(mine),
                unsupported_passes={
                    name: sum(run.unsupported for run in mine if run.key.configuration == name)
                    for name in configurations
                },
                meets_bar=not problems,
                problems=problems,
                **found,
            )
        )
    return verdicts


def benchmark_document(meta: Metadata, runs: Sequence[EvalRunResult]) -> BenchmarkDocument:
    """benchmark.json: skill-creator's shape, the runs in eval, configuration, run order;
    ``meta`` is its ``metadata`` but for what the runs say (the evals run, the runs skipped)."""
    configurations = meta.configurations or []
    figures = {name: _summary(runs, name) for name in configurations}
    first, second = figures.values()
    difference = {
        metric: delta(getattr(first, metric).mean, getattr(second, metric).mean, digits)
        for metric, digits in (("pass_rate", 2), ("time_seconds", 1), ("tokens", 0))
    }
    summary: dict[str, ConfigurationSummary | Delta] = {**figures, "delta": Delta(**difference)}
    counted = {
        "evals_run": list(dict.fromkeys(run.key.eval_id for run in runs)),
        "runs_skipped": sum(run.skipped for run in runs),
    }
    document = BenchmarkDocument(
        metadata=meta.model_copy(update=counted),
        runs=[RunEntry.model_validate(run.benchmark_entry()) for run in runs],
        run_summary=summary,
        evals=eval_verdicts(meta, runs),
        overall=Overall(**evidence.overall_evidence(runs, configurations)),
    )
    return document.model_copy(update={"notes": results_view(document).notes}).stamped()
