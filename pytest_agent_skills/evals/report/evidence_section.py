"""The report's evidence: 95% intervals, verdicts, the runs hint and flaky expectations, as
benchmark.json records them (docs/evals.md, "How sure is a verdict?"). An older benchmark
without them shows none of this."""

from __future__ import annotations

from ...typed_documents import Interval
from ..documents.benchmark_model import EvalVerdict
from ..documents.overview import ModelFigures, ModelsDocument
from ..verdicts.results_view import evidence_hint
from .markup import Markup, column_heads, el
from .values import Benchmark


def interval_text(interval: Interval | None, signed: bool = False) -> str:
    """``40–90%`` (rates) or ``-12 – +60 points`` (deltas); ``no interval``."""
    if interval is None:
        return "no interval"
    low, high = (value * 100 for value in interval)
    if signed:
        return f"{low:+.0f} – {high:+.0f} points"
    return f"{low:.0f}–{high:.0f}%"


def verdict_badge(verdict: str) -> Markup | None:
    if not verdict:
        return None
    return el("span", verdict, class_=f"verdict verdict-{verdict}", data_verdict=verdict)


def delta_cell(evidence: EvalVerdict | None, floor: Interval | None) -> Markup | None:
    """The delta's interval, its verdict, the runs hint and the A/A noise floor (this
    eval's, else every eval's): an eval table cell's tail."""
    if evidence is None or not evidence.verdict:
        return None
    floor = evidence.noise_floor_ci95 or floor
    return el(
        "div",
        el("span", f"95%: {interval_text(evidence.delta_ci95, signed=True)}", class_="ci"),
        " ",
        verdict_badge(evidence.verdict),
        el("div", evidence_hint(evidence), class_="hint quiet"),
        el("div", f"A/A noise floor {interval_text(floor, signed=True)}", class_="floor quiet")
        if floor is not None
        else None,
        class_="evidence",
    )


def overall_lines(benchmark: Benchmark) -> Markup | None:
    """The delta card's interval and verdict over every eval, and the noise floor."""
    overall, calibration = benchmark.document.overall, benchmark.document.calibration
    if overall is None or not overall.verdict:
        return None
    flip_share = calibration.flip_share if calibration else None
    return el(
        "div",
        el("div", f"95%: {interval_text(overall.delta_ci95, signed=True)} ", class_="ci"),
        verdict_badge(overall.verdict),
        el(
            "div",
            f"A/A noise floor {interval_text(benchmark.floor, signed=True)}"
            + (
                f", {flip_share * 100:.0f}% of expectation verdicts flip"
                if flip_share is not None
                else ""
            ),
            class_="floor quiet",
        )
        if benchmark.floor is not None
        else None,
        class_="evidence",
        id="overall-verdict",
    )


def all_met_line(benchmark: Benchmark, configuration: str) -> Markup | None:
    summary = benchmark.summary.get(configuration)
    interval = summary.all_met_ci95 if summary else None
    if interval is None:
        return None
    return el("div", f"all expectations met: 95% {interval_text(interval)}", class_="ci quiet")


def flaky_section(benchmark: Benchmark, titles: dict[int, str]) -> Markup | None:
    """Expectations that passed in some runs of a configuration and failed in others."""
    rows = [
        el(
            "tr",
            el("td", titles.get(eval_id, str(eval_id))),
            el("td", item.configuration),
            el("td", item.text),
            el("td", f"{item.passed}/{item.runs}", class_="num"),
            el("td", f"{item.passed / item.runs * 100:.0f}%", class_="num"),
            class_="flaky-row",
            data_eval=eval_id,
            data_configuration=item.configuration,
        )
        for eval_id, evidence in sorted(benchmark.evidence.items())
        for item in evidence.flaky
    ]
    if not benchmark.evidence:
        return None
    split = [
        el(
            "tr",
            el("td", titles.get(eval_id, str(eval_id))),
            el("td", f"{item.configuration} #{item.run_number}"),
            el("td", item.text),
            el("td", f"{item.passed}/{item.gradings}", class_="num"),
            class_="split-row",
            data_eval=eval_id,
        )
        for eval_id, evidence in sorted(benchmark.evidence.items())
        for item in evidence.grader_disagreements
    ]
    head = column_heads(("Eval", "Configuration", "Expectation", "Passed", "Share"))
    return el(
        "section",
        el("h2", "Flaky expectations"),
        el(
            "p",
            "Each passed in some runs of a configuration and failed in others: more runs, or a"
            " sharper expectation, before trusting a verdict built on it.",
            class_="quiet",
        )
        if rows
        else el("p", "No expectation passed in some runs and failed in others.", class_="quiet"),
        el("table", el("thead", head), el("tbody", rows), class_="flaky") if rows else None,
        [
            el("h3", "Grader disagreements"),
            el(
                "p",
                "The gradings of one run's transcript split on these (--grader-runs): never"
                " counted as a pass.",
                class_="quiet",
            ),
            el(
                "table",
                el(
                    "thead", column_heads(("Eval", "Run", "Expectation", "Gradings that passed it"))
                ),
                el("tbody", split),
                class_="flaky grader-split",
            ),
        ]
        if split
        else None,
        id="flaky",
    )


def _model_cells(figures: ModelFigures) -> list[Markup]:
    return [
        el("td", f"{figures.with_skill * 100:.0f}%", class_="num rate"),
        el("td", interval_text(figures.with_skill_ci95), class_="num ci"),
        el("td", figures.delta, class_="num delta"),
        el("td", interval_text(figures.delta_ci95, signed=True), class_="num ci"),
        el("td", verdict_badge(figures.verdict)),
        el("td", f"{figures.tokens:,.0f}", class_="num"),
        el("td", f"{figures.time_seconds:.1f} s", class_="num"),
    ]


def models_section(overview: ModelsDocument) -> Markup:
    """The first section of a several-models folder: per eval and model, the with-skill pass
    rate, the delta with its interval and verdict, tokens and time; each model's own report
    one link away."""
    groups = [("All evals", overview.overall)] + [
        (f"{item.eval_id}. {item.eval_name}", item.models) for item in overview.evals
    ]
    rows = []
    for title, figures in groups:
        for position, model in enumerate(overview.models):
            if model not in figures:
                continue
            rows.append(
                el(
                    "tr",
                    el("th", title, rowspan=len(overview.models), scope="rowgroup")
                    if position == 0
                    else None,
                    el(
                        "td",
                        el("a", model, href=f"{overview.folders[model]}/report.html"),
                        class_="model",
                    ),
                    _model_cells(figures[model]),
                    class_="model-row" + (" group-start" if position == 0 else ""),
                    data_model=model,
                    data_group=title,
                )
            )
    head = column_heads(
        (
            "Eval",
            "Model",
            "With skill",
            "95% interval",
            "Δ pass rate",
            "Δ 95% interval",
            "Verdict",
            "Tokens (with skill)",
            "Time (with skill)",
        )
    )
    return el(
        "section",
        el("h2", "Models: where does the skill help?"),
        el(
            "p",
            f"The evals of {overview.skill_name} on {len(overview.models)} models; each model's"
            " link opens its own report.",
            class_="quiet",
        ),
        el("table", el("thead", head), el("tbody", rows), class_="evals models", id="models-table"),
        id="models",
    )
