"""benchmark.md: a benchmark's summary, its evals, what a reader should notice and every run
as tables a person reads, rendered from the typed benchmark.json and the words of
:mod:`.results_view`."""

from __future__ import annotations

from collections.abc import Sequence

from ..documents.benchmark_model import (
    BenchmarkDocument,
    ConfigurationSummary,
    Delta,
    Overall,
    RunEntry,
)
from ..setup.eval_runtime import HOST_WARNING
from .results_view import results_view, run_table, spread


def benchmark_markdown(document: BenchmarkDocument) -> str:
    """benchmark.md of a benchmark.json document."""
    view = results_view(document)
    meta, overall = document.metadata, document.overall or Overall()
    configurations = meta.configurations or []
    lines = [
        f"# Benchmark: {meta.skill_name}",
        "",
        f"Model {meta.executor_model}, grader {meta.grader_model},"
        f" {meta.runs_per_configuration} runs per configuration, {meta.timestamp},"
        f" runtime {meta.runtime or 'unknown'}.",
        "",
        *([f"**Warning: {HOST_WARNING}.**", ""] if meta.runtime == "local" else []),
        *(
            [
                f"Baseline: the skill as it was at {meta.baseline.ref} (commit"
                f" {meta.baseline.commit}), taken from git.",
                "",
            ]
            if meta.baseline
            else []
        ),
        "| configuration | pass rate | 95% interval | all expectations met (95%) | time (s)"
        " | tokens |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in configurations:
        part = document.run_summary[name]
        assert isinstance(part, ConfigurationSummary)
        lines.append(
            f"| {name} | {spread(part.pass_rate, '.2f')} |"
            f" {_range(part.pass_rate.ci95 if part.pass_rate else None)} |"
            f" {_range(part.all_met_ci95)} | {spread(part.time_seconds, '.1f')} |"
            f" {spread(part.tokens, '.0f')} |"
        )
    delta = document.run_summary["delta"]
    assert isinstance(delta, Delta)
    lines.append(
        f"| delta | {delta.pass_rate} | {_range(overall.delta_ci95, signed=True)} |"
        f" {overall.verdict} | {delta.time_seconds} | {delta.tokens} |"
    )
    header = (
        "| eval | "
        + " | ".join(f"{name} (95%)" for name in configurations)
        + " | delta (95%) | verdict | runs for ±0.10 | bar |"
    )
    lines += ["", header, "| --- " * (len(configurations) + 5) + "|"]
    for verdict, shown_eval in zip(document.evals, view.evals, strict=True):
        rates = " | ".join(
            f"{spread(verdict.pass_rate[name], '.2f')} {_range(verdict.pass_rate[name].ci95)}"
            for name in configurations
        )
        shown = verdict.verdict
        if verdict.verdict_note:
            shown += f" ({verdict.verdict_note})"
        if verdict.noise_floor_ci95:
            shown += f"; A/A floor {_range(verdict.noise_floor_ci95, signed=True)}"
        needed = "–" if verdict.runs_for_0_10 is None else str(verdict.runs_for_0_10)
        lines.append(
            f"| {verdict.eval_id} {verdict.eval_name} | {rates} | {verdict.delta}"
            f" {_range(verdict.delta_ci95, signed=True)} | {shown} | {needed} |"
            f" {shown_eval.bar} |"
        )
    if overall.method:
        lines += ["", f"Intervals: {overall.method}."]
    split = [(verdict, item) for verdict in document.evals for item in verdict.grader_disagreements]
    if split:
        lines += _table(
            "Grader disagreements (the gradings of one run split; never counted as a pass):",
            ("eval", "configuration", "run", "expectation", "gradings that passed it"),
            [
                f"| {verdict.eval_id} | {item.configuration} | {item.run_number} |"
                f" {_cell(item.text)} | {item.passed}/{item.gradings} |"
                for verdict, item in split
            ],
        )
    lines += unsupported_table(document.runs)
    if document.calibration:
        lines += [
            "",
            f"Noise floor (A/A calibration of {document.calibration.timestamp}, same skill,"
            f" models and runs): {view.calibration}.",
        ]
    flaky = [(verdict, item) for verdict in document.evals for item in verdict.flaky]
    if flaky:
        lines += _table(
            "Flaky expectations (pass in some runs of a configuration, fail in others):",
            ("eval", "configuration", "expectation", "passed"),
            [
                f"| {verdict.eval_id} | {item.configuration} | {_cell(item.text)} |"
                f" {item.passed}/{item.runs} |"
                for verdict, item in flaky
            ],
        )
    lines += ["", run_table(view.runs)]
    if document.notes:
        lines += ["", "Notes:", ""] + [f"- {note}" for note in document.notes]
    return "\n".join(lines) + "\n"


def unsupported_table(runs: Sequence[RunEntry]) -> list[str]:
    """The lines of the unsupported passes, each with the quotes not found."""
    found = [
        (run, item) for run in runs for item in run.expectations or () if item.supported is False
    ]
    if not found:
        return []
    return _table(
        "Unsupported passes (the grader passed them; none of its quotes is in the run):",
        ("eval", "configuration", "run", "expectation", "quotes not found"),
        [
            f"| {run.eval_id} | {run.configuration} | {run.run_number} | {_cell(item.text)} |"
            f" {_cell('; '.join(repr(quote) for quote in item.quotes) or '(none given)')} |"
            for run, item in found
        ],
    )


def _table(title: str, columns: Sequence[str], rows: list[str]) -> list[str]:
    """A titled table after a blank line."""
    head = "| " + " | ".join(columns) + " |"
    return ["", title, "", head, "| --- " * len(columns) + "|", *rows]


def _range(interval: Sequence[float] | None, signed: bool = False) -> str:
    """``[0.40, 0.90]`` or ``(no interval)``."""
    if interval is None:
        return "(no interval)"
    spec = "+.2f" if signed else ".2f"
    return f"[{format(interval[0], spec)}, {format(interval[1], spec)}]"


def _cell(text: str) -> str:
    """Text in a table cell: one line, no column bar."""
    return " ".join(text.split()).replace("|", "\\|")
