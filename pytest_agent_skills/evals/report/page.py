"""report.html: one self-contained page of an eval output folder.

Rendered on the server side, so the page reads without its script; the inline script only
opens the run a link points at and filters runs. The Content-Security-Policy allows nothing
but the page's own style sheet and script (by hash): no request can leave the page, even if
some content were to slip past the escaping.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources

from ...typed_documents import Interval
from ..documents.triggers import Totals, TriggerResultsDocument
from ..setup.budget import never_started
from ..setup.eval_runtime import HOST_WARNING
from ..verdicts.results_view import COUNTED, delta, eval_view
from .chart import pass_rate_chart, percent, span, spread
from .evidence_section import (
    all_met_line,
    delta_cell,
    flaky_section,
    interval_text,
    models_section,
    overall_lines,
)
from .markup import Child, Markup, column_heads, el, html_page
from .runs_section import count, errors_section, failing_section, runs_section
from .triggers_section import candidates_section, matrix_section
from .values import Benchmark, ReportFolder
from .view import BenchmarkView, Cell, EvalGroup, view_of


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


# --- summary -----------------------------------------------------------------------------


def _skill_name(folder: ReportFolder) -> str:
    recorded = folder.benchmark.document.metadata.skill_name if folder.benchmark else ""
    improved = folder.candidates.skill_name if folder.candidates else ""
    several = folder.models.skill_name if folder.models else ""
    return (
        recorded or (folder.triggers.skill_name if folder.triggers else "") or improved or several
    )


def _runtime(folder: ReportFolder) -> str:
    """Where the model's commands ran, as benchmark.json (else triggers.json) records it."""
    recorded = folder.benchmark.document.metadata.runtime if folder.benchmark else ""
    return str(recorded or (folder.triggers.runtime if folder.triggers else ""))


def _header(folder: ReportFolder) -> Markup:
    benchmark, triggers = folder.benchmark, folder.triggers
    skill = _skill_name(folder)
    facts: list[Markup] = []
    if benchmark:
        for key, value in benchmark.metadata.items():
            if key not in ("skill_name", "runtime"):
                facts.append(el("div", el("dt", key.replace("_", " ")), el("dd", value)))
    runtime = _runtime(folder)
    if runtime:
        shown = "runtime-local" if runtime == "local" else "runtime-isolated"
        facts.append(el("div", el("dt", "runtime"), el("dd", runtime, class_=shown)))
    return el(
        "header",
        el("h1", f"{skill or 'Skill'}: eval report"),
        el("dl", facts, class_="facts") if facts else None,
        el("p", f"Warning: {HOST_WARNING}.", class_="runtime-warning", role="alert")
        if runtime == "local"
        else None,
        el(
            "nav",
            [
                el("a", label, href=f"#{target}")
                for target, label, shown in (
                    ("models", "Models", folder.models),
                    ("summary", "Summary", benchmark),
                    ("failing", "Failing expectations", benchmark),
                    ("flaky", "Flaky expectations", benchmark and benchmark.evidence),
                    ("errors", "Errors", benchmark),
                    ("runs", "Runs", benchmark),
                    ("triggers", "Triggers", triggers),
                    ("matrix", "Which skill fires", folder.matrix),
                    ("candidates", "Description candidates", folder.candidates),
                )
                if shown
            ],
            aria_label="Sections",
        ),
    )


def _stat_line(cell: Cell) -> Markup:
    stat = cell.pass_rate
    return el(
        "div",
        el("span", percent(stat.mean), class_="big"),
        el("span", f" ± {stat.stddev * 100:.0f}", class_="sd"),
        el("div", f"min-max {span(stat)} over {count(len(cell.runs), 'run')}"),
        el("div", f"95% interval {interval_text(stat.ci95)}", class_="ci") if stat.ci95 else None,
    )


def _summary_cards(view: BenchmarkView, benchmark: Benchmark) -> Markup:
    cards = []
    for index, cell in enumerate(view.overall):
        cards.append(
            el(
                "div",
                el("h3", cell.configuration),
                _stat_line(cell),
                all_met_line(benchmark, cell.configuration),
                el(
                    "div",
                    f"{cell.time_seconds.mean:.1f} s · "
                    f"{cell.tokens.mean:,.0f} tokens per run (mean)",
                ),
                el(
                    "div",
                    count(cell.errors, "errored run") + " (counted as failed)",
                    class_="errors-line",
                )
                if cell.errors
                else el("div", "no errors", class_="quiet"),
                class_=f"card cfg-{index}",
                id=f"summary-{cell.configuration}",
                data_pass_rate=f"{cell.pass_rate.mean:.4f}",
            )
        )
    first, *others = view.overall
    for other in others:
        cards.append(
            el(
                "div",
                el("h3", f"{first.configuration} − {other.configuration}"),
                el(
                    "div",
                    el("span", delta(first.pass_rate.mean, other.pass_rate.mean, 2), class_="big"),
                    " pass rate",
                ),
                el(
                    "div",
                    f"{delta(first.time_seconds.mean, other.time_seconds.mean, 1)} s · "
                    f"{delta(first.tokens.mean, other.tokens.mean, 0)} tokens",
                ),
                overall_lines(benchmark) if other is view.overall[1] else None,
                class_="card delta " + _delta_class(first.pass_rate.mean - other.pass_rate.mean),
                data_delta=delta(first.pass_rate.mean, other.pass_rate.mean, 2),
            )
        )
    return el("div", cards, class_="cards")


def _delta_class(value: float) -> str:
    return "up" if value > 0.005 else "down" if value < -0.005 else "even"


def _bar_cell(group: EvalGroup) -> Markup:
    """Whether the eval meets its bar, in the words of the command and benchmark.md."""
    evidence = group.evidence
    if evidence is None or evidence.meets_bar is None:
        return el("td", "—", rowspan=len(group.cells), class_="bar")
    shown = eval_view(evidence)
    return el(
        "td",
        shown.bar,
        rowspan=len(group.cells),
        class_="bar" + ("" if shown.meets_bar else " has-errors"),
    )


def _eval_table(view: BenchmarkView, floor: Interval | None) -> Markup:
    first = view.configurations[0]
    # benchmark.json's evals[] says whether each eval meets its bar (older ones do not).
    with_bar = any(group.evidence and group.evidence.meets_bar is not None for group in view.evals)
    rows = []
    for group in view.evals:
        lead = next((cell for cell in group.cells if cell.configuration == first), None)
        for position, cell in enumerate(group.cells):
            index = view.configurations.index(cell.configuration)
            shown_delta: Child = "—"
            if lead is not None and cell is not lead:
                value = delta(lead.pass_rate.mean, cell.pass_rate.mean, 2)
                shown_delta = [
                    el(
                        "span",
                        value,
                        class_=_delta_class(lead.pass_rate.mean - cell.pass_rate.mean),
                    ),
                    delta_cell(group.evidence, floor) if position == 1 else None,
                ]
            rows.append(
                el(
                    "tr",
                    el(
                        "th",
                        f"{group.eval_id}. {group.name}",
                        rowspan=len(group.cells),
                        scope="rowgroup",
                    )
                    if position == 0
                    else None,
                    el("td", el("span", "", class_=f"swatch cfg-{index}"), cell.configuration),
                    el("td", spread(cell.pass_rate), class_="num rate"),
                    el("td", interval_text(cell.pass_rate.ci95), class_="num ci")
                    if group.evidence
                    else el("td", span(cell.pass_rate), class_="num"),
                    el("td", f"{cell.fully_passed}/{len(cell.runs)}", class_="num"),
                    el(
                        "td",
                        str(cell.errors),
                        class_="num" + (" has-errors" if cell.errors else ""),
                    ),
                    el("td", f"{cell.time_seconds.mean:.1f} s", class_="num"),
                    el("td", f"{cell.tokens.mean:,.0f}", class_="num"),
                    el("td", shown_delta, class_="num"),
                    el(
                        "td",
                        el(
                            "a",
                            "runs",
                            href=f"#runs-{group.eval_id}-{cell.configuration}",
                        ),
                    ),
                    _bar_cell(group) if with_bar and position == 0 else None,
                    data_eval=group.eval_id,
                    data_configuration=cell.configuration,
                    class_="eval-row" + (" group-start" if position == 0 else ""),
                )
            )
    head = column_heads(
        (
            "Eval",
            "Configuration",
            "Pass rate (mean ± sd)",
            "95% interval" if any(group.evidence for group in view.evals) else "Min-max",
            "All expectations met",
            "Errors",
            "Time",
            "Tokens",
            f"Δ ({first} − this)",
            "",
            *(("Bar",) if with_bar else ()),
        )
    )
    return el("table", el("thead", head), el("tbody", rows), class_="evals", id="eval-table")


def _skipped_line(view: BenchmarkView, runs: int) -> Markup | None:
    """How many of the ``runs`` were never started: counted apart, in no figure of the page."""
    if not view.skipped:
        return None
    return el(
        "p",
        never_started(len(view.skipped), runs, COUNTED) + ".",
        class_="skipped-line",
        id="skipped",
    )


def _summary(view: BenchmarkView, benchmark: Benchmark) -> Markup:
    groups = [("All evals", view.overall)] + [
        (f"{group.eval_id}. {group.name}", group.cells) for group in view.evals
    ]
    notes = (
        el("ul", [el("li", note) for note in benchmark.document.notes], class_="notes")
        if benchmark.document.notes
        else None
    )
    return el(
        "section",
        el("h2", "Summary"),
        _summary_cards(view, benchmark),
        _skipped_line(view, len(benchmark.runs)),
        el(
            "figure",
            pass_rate_chart(groups, view.configurations),
            el(
                "figcaption",
                "Dot: mean pass rate. Band: ± one standard deviation. Whisker: the 95% interval"
                " of the mean over graded runs (min-max where the benchmark records none). "
                "Errored runs count as 0 in the mean and are left out of the intervals.",
            ),
        ),
        _eval_table(view, benchmark.floor),
        el("h3", "Notes") if notes else None,
        notes,
        id="summary",
    )


# --- triggers -----------------------------------------------------------------------------


def _rate_bar(rate: float, passed: bool) -> Markup:
    width = 120
    return el(
        "svg",
        el("rect", x=0, y=3, width=width, height=10, class_="track"),
        el(
            "rect",
            x=0,
            y=3,
            width=f"{max(0.0, min(1.0, rate)) * width:.1f}",
            height=10,
            class_="fill " + ("pass" if passed else "fail"),
        ),
        xmlns="http://www.w3.org/2000/svg",
        width=width,
        height=16,
        aria_hidden="true",
        class_="rate-bar",
    )


def _triggers(triggers: TriggerResultsDocument) -> Markup:
    rows = [
        el(
            "tr",
            el(
                "td",
                result.query,
                el("ul", [el("li", message) for message in result.error_messages], class_="errors")
                if result.error_messages
                else None,
                class_="query",
            ),
            el("td", "yes" if result.should_trigger else "no"),
            el("td", f"{result.triggers}/{result.runs}", class_="num"),
            el("td", str(result.errors), class_="num" + (" has-errors" if result.errors else "")),
            el(
                "td",
                _rate_bar(result.trigger_rate, result.passed),
                " ",
                percent(result.trigger_rate),
                class_="num rate",
            ),
            el(
                "td",
                el("span", "pass", class_="badge pass")
                if result.passed
                else el("span", "fail", class_="badge fail"),
            ),
            class_="trigger " + ("is-pass" if result.passed else "is-fail"),
        )
        for result in triggers.results
    ]
    head = column_heads(("Query", "Should trigger", "Triggered", "Errors", "Trigger rate", ""))
    facts = [triggers.model] if triggers.model else []
    if triggers.threshold is not None:
        facts.append(f"threshold {triggers.threshold:g}")
    about = f" ({', '.join(facts)})" if facts else ""
    passed = sum(result.passed for result in triggers.results)
    totals = triggers.summary or Totals(
        total=len(triggers.results), passed=passed, failed=len(triggers.results) - passed
    )
    return el(
        "section",
        el("h2", "Triggers"),
        el(
            "p",
            el(
                "strong",
                f"{totals.passed} of {totals.total} queries pass",
                id="triggers-summary",
            ),
            f"; {totals.failed} fail{about}.",
            class_="triggers-line",
        ),
        el("blockquote", triggers.description, class_="description")
        if triggers.description
        else None,
        el("table", el("thead", head), el("tbody", rows), class_="triggers"),
        id="triggers",
    )


def _body(folder: ReportFolder) -> Iterable[Markup]:
    yield _header(folder)
    benchmark = folder.benchmark
    main: list[Markup | None] = []
    if folder.models is not None:
        main.append(models_section(folder.models))
    if benchmark is not None:
        view = view_of(benchmark)
        if view.configurations:
            titles = {group.eval_id: f"{group.eval_id}. {group.name}" for group in view.evals}
            main += [
                _summary(view, benchmark),
                failing_section(view),
                flaky_section(benchmark, titles),
                errors_section(view),
                runs_section(view),
            ]
        else:
            main.append(
                el(
                    "section",
                    el("h2", "Summary"),
                    el("p", "benchmark.json lists no runs."),
                    id="summary",
                )
            )
    if folder.triggers is not None:
        main.append(_triggers(folder.triggers))
    if folder.matrix is not None:
        main.append(matrix_section(folder.matrix))
    if folder.candidates is not None:
        main.append(candidates_section(folder.candidates))
    yield el("main", main)


def render_page(folder: ReportFolder) -> str:
    title = f"{_skill_name(folder) or 'Skill'} eval report"
    return html_page(title, list(_body(folder)), script=_asset("report.js"))
