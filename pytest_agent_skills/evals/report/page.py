"""report.html: one self-contained page of an eval output folder.

Rendered on the server side, so the page reads without its script; the inline script only
opens the run a link points at and filters runs. The Content-Security-Policy allows nothing
but the page's own style sheet and script (by hash): no request can leave the page, even if
some content were to slip past the escaping.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from urllib.parse import quote

from ..setup.eval_runtime import HOST_WARNING
from .chart import pass_rate_chart, percent, span, spread
from .evidence_section import (
    all_met_line,
    delta_cell,
    flaky_section,
    interval_text,
    models_section,
    overall_lines,
)
from .folder import (
    Benchmark,
    Interval,
    Message,
    OutputFile,
    ReportFolder,
    Run,
    ToolCall,
    Transcript,
    Triggers,
)
from .markup import Child, Markup, column_heads, el
from .triggers_section import candidates_section, matrix_section
from .view import BenchmarkView, Cell, FailingExpectation, delta, view_of

TRANSCRIPT_TEXT_LIMIT = 8_000  # characters of one message, argument or tool result shown
RUN_TRANSCRIPT_LIMIT = 60_000  # characters of one run's transcript shown
EVIDENCE_SHOWN = 3  # distinct evidence texts shown before "more"


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def run_anchor(run: Run) -> str:
    # Configuration names have no spaces (report_input checks them): each makes its own id.
    return f"run-{run.eval_id}-{run.configuration}-{run.run_number}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


@dataclass
class _Clipper:
    """Shows a run's transcript texts cut to size: each to TRANSCRIPT_TEXT_LIMIT characters,
    all of them together to RUN_TRANSCRIPT_LIMIT (transcript.json keeps them whole)."""

    left: int = RUN_TRANSCRIPT_LIMIT

    def __call__(self, text: str) -> Markup:
        shown = min(len(text), TRANSCRIPT_TEXT_LIMIT, max(self.left, 0))
        self.left -= shown
        if shown == len(text):
            return el("pre", text)
        more = f"\n… {len(text) - shown:,} more characters (all of them in transcript.json)"
        return el("pre", text[:shown], el("span", more, class_="clipped"))


def _size(size: int) -> str:
    if size < 1024:
        return f"{size:,} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def _status(run: Run) -> Markup:
    if run.error is not None:
        return el("span", f"error: {run.error.kind}", class_="badge error")
    if run.errors:
        return el("span", _count(run.errors, "error"), class_="badge error")
    return el("span", run.outcome, class_=f"badge {run.outcome}")


# --- summary -----------------------------------------------------------------------------


def _skill_name(folder: ReportFolder) -> str:
    recorded = folder.benchmark.metadata.get("skill_name", "") if folder.benchmark else ""
    improved = folder.candidates.skill_name if folder.candidates else ""
    several = folder.models.skill_name if folder.models else ""
    return (
        recorded or (folder.triggers.skill_name if folder.triggers else "") or improved or several
    )


def _runtime(folder: ReportFolder) -> str:
    """Where the model's commands ran, as benchmark.json (else triggers.json) records it."""
    recorded = folder.benchmark.metadata.get("runtime", "") if folder.benchmark else ""
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
                    ("flaky", "Flaky expectations", benchmark and benchmark.verdicts.evals),
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
        el("div", f"min-max {span(stat)} over {_count(len(cell.runs), 'run')}"),
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
                    _count(cell.errors, "errored run") + " (counted as failed)",
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


def _eval_table(view: BenchmarkView, floor: Interval | None) -> Markup:
    first = view.configurations[0]
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
        )
    )
    return el("table", el("thead", head), el("tbody", rows), class_="evals", id="eval-table")


def _skipped_line(view: BenchmarkView) -> Markup | None:
    """How many runs were never started: counted apart, in no figure of the page."""
    if not view.skipped:
        return None
    return el(
        "p",
        _count(len(view.skipped), "run")
        + " skipped: never started, the token budget (--max-tokens) was spent; counted in"
        " neither pass nor error.",
        class_="skipped-line",
        id="skipped",
    )


def _summary(view: BenchmarkView, benchmark: Benchmark) -> Markup:
    groups = [("All evals", view.overall)] + [
        (f"{group.eval_id}. {group.name}", group.cells) for group in view.evals
    ]
    notes = (
        el("ul", [el("li", note) for note in benchmark.notes], class_="notes")
        if benchmark.notes
        else None
    )
    return el(
        "section",
        el("h2", "Summary"),
        _summary_cards(view, benchmark),
        _skipped_line(view),
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
        _eval_table(view, benchmark.verdicts.floor),
        el("h3", "Notes") if notes else None,
        notes,
        id="summary",
    )


# --- failing expectations and errors -----------------------------------------------------


def _run_link(run: Run) -> Markup:
    return el(
        "a", f"{run.configuration} #{run.run_number}", href=f"#{run_anchor(run)}", class_="run-link"
    )


def _run_links(runs: Iterable[Run]) -> Markup:
    """``with_skill #1 #4 · baseline #2``: links to runs, grouped by configuration."""
    by_configuration: dict[str, list[Run]] = {}
    for run in runs:
        by_configuration.setdefault(run.configuration, []).append(run)
    groups = [
        el(
            "span",
            f"{name} ",
            [
                (el("a", f"#{run.run_number}", href=f"#{run_anchor(run)}", class_="run-link"), " ")
                for run in mine
            ],
            class_="run-group",
        )
        for name, mine in by_configuration.items()
    ]
    return el("span", groups, class_="runs")


def _failing_item(item: FailingExpectation) -> Markup:
    counts = ", ".join(
        f"{failed}/{graded} {name}" for name, (failed, graded) in item.failed.items()
    )
    evidence = [
        el("li", el("q", said.text or "(no evidence given)"), " ", _run_links(said.runs))
        for said in item.evidence
    ]
    more = evidence[EVIDENCE_SHOWN:]
    return el(
        "li",
        el(
            "div",
            el("span", "✘ ", class_="cross"),
            el("strong", item.text),
            " ",
            el("span", f"failed in {counts}", class_="counts"),
        ),
        el("ul", evidence[:EVIDENCE_SHOWN], class_="evidence"),
        el(
            "details",
            el("summary", f"{len(more)} more evidence"),
            el("ul", more, class_="evidence"),
        )
        if more
        else None,
        class_="failing-expectation",
    )


def _failing(view: BenchmarkView) -> Markup:
    blocks = []
    for group in view.evals:
        items = view.failing.get(group.eval_id, ())
        if items:
            blocks.append(el("h3", f"{group.eval_id}. {group.name}"))
            blocks.append(el("ul", [_failing_item(item) for item in items], class_="failing"))
    return el(
        "section",
        el("h2", "Failing expectations"),
        blocks or el("p", "Every graded expectation passed in every run.", class_="quiet"),
        id="failing",
    )


def _errors(view: BenchmarkView) -> Markup:
    if not view.errored:
        return el(
            "section", el("h2", "Errors"), el("p", "No run errored.", class_="quiet"), id="errors"
        )
    rows = [
        el(
            "tr",
            el("td", f"{run.eval_id}. {run.eval_name}"),
            el("td", _run_link(run)),
            el("td", run.error.kind if run.error else "—", class_="kind"),
            el("td", el("pre", run.error.message) if run.error else _count(run.errors, "error")),
        )
        for run in view.errored
    ]
    head = column_heads(("Eval", "Run", "Kind", "Message"))
    return el(
        "section",
        el("h2", f"Errors ({len(view.errored)})"),
        el("p", "An errored run is never a pass: its pass rate counts as 0."),
        el("table", el("thead", head), el("tbody", rows), class_="errors"),
        id="errors",
    )


# --- runs ---------------------------------------------------------------------------------


def _tool_call(call: ToolCall, clip: _Clipper) -> Markup:
    return el(
        "div",
        el(
            "div",
            el("span", "tool call ", class_="quiet"),
            el("code", call.name),
            class_="call-name",
        ),
        el("div", "arguments", class_="caption"),
        clip(call.arguments or "{}"),
        el("div", "result", class_="caption"),
        clip(call.result)
        if call.result is not None
        else el("p", "no result recorded", class_="quiet"),
        class_="tool-call",
    )


def _message(message: Message, clip: _Clipper) -> Markup:
    if message.role == "system":
        return el(
            "details",
            el("summary", f"system prompt ({len(message.content):,} characters)"),
            clip(message.content),
            class_="message system",
        )
    return el(
        "div",
        el("div", message.role, class_="role"),
        clip(message.content) if message.content else None,
        [_tool_call(call, clip) for call in message.tool_calls],
        class_=f"message {message.role}",
    )


def _transcript(transcript: Transcript) -> Markup:
    messages = list(transcript.messages)
    # The last assistant answer is the final text, shown on its own below.
    last = messages[-1] if messages else None
    if (
        last
        and last.role == "assistant"
        and not last.tool_calls
        and last.content == transcript.final_text
    ):
        messages.pop()
    calls = sum(len(message.tool_calls) for message in messages)
    clip = _Clipper()
    return el(
        "div",
        el("h4", f"Transcript ({_count(calls, 'tool call')})"),
        [_message(message, clip) for message in messages]
        if messages
        else el(
            "div", el("div", "user", class_="role"), clip(transcript.prompt), class_="message user"
        ),
        el(
            "div",
            el("div", "final answer", class_="role"),
            _Clipper()(transcript.final_text),  # the answer shows whatever came before
            class_="message final",
        )
        if transcript.final_text
        else el("p", "no final answer", class_="quiet"),
        class_="transcript",
    )


def _output(run: Run, output: OutputFile) -> Markup:
    href = quote(f"{run.run_dir}/outputs/{output.path}")
    name = el("a", output.path, href=href)
    if output.kind == "symlink":
        return el("li", name, f" symlink to {output.text} (not followed)", class_="output")
    if output.kind != "text":
        why = "binary" if output.kind == "binary" else "not shown: the page's size budget is spent"
        return el("li", name, f" {_size(output.size)}, {why}", class_="output")
    note = f" (first {len(output.text):,} characters shown)" if output.truncated else ""
    return el(
        "li",
        el(
            "details",
            el("summary", el("code", output.path), f" {_size(output.size)} text{note}"),
            el("pre", output.text),
            el("a", "open the file", href=href),
        ),
        class_="output",
    )


def _run(run: Run) -> Markup:
    facts = (
        f"{run.passed}/{run.total} expectations · {run.time_seconds:.1f} s · "
        f"{run.tokens:,} tokens · {_count(run.tool_calls, 'tool call')}"
    )
    expectations = el(
        "ul",
        [
            el(
                "li",
                el(
                    "span", "✔ " if item.passed else "✘ ", class_="tick" if item.passed else "cross"
                ),
                item.text,
                el("div", item.evidence, class_="evidence-text") if item.evidence else None,
                class_="expectation " + ("passed" if item.passed else "failed"),
            )
            for item in run.expectations
        ],
        class_="expectations",
    )
    return el(
        "details",
        el("summary", _status(run), f" run {run.run_number} ", el("span", facts, class_="quiet")),
        el(
            "div",
            el("strong", f"{run.error.kind} error: "),
            el("pre", run.error.message),
            class_="error-box",
        )
        if run.error
        else None,
        el("h4", "Expectations"),
        expectations if run.expectations else el("p", "no expectations graded", class_="quiet"),
        _transcript(run.transcript)
        if run.transcript
        else el(
            "p",
            f"no transcript recorded in {run.run_dir}" + ("" if run.found else " (no run folder)"),
            class_="quiet",
        ),
        el("h4", f"Output files ({len(run.outputs) + run.outputs_omitted})"),
        el("ul", [_output(run, output) for output in run.outputs], class_="outputs")
        if run.outputs
        else el("p", "none", class_="quiet"),
        el("p", f"{run.outputs_omitted} more files not listed", class_="quiet")
        if run.outputs_omitted
        else None,
        el("ul", [el("li", note) for note in run.notes], class_="notes") if run.notes else None,
        class_=f"run is-{run.outcome}",
        id=run_anchor(run),
    )


def _chip(run: Run) -> Markup:
    return el(
        "a",
        str(run.run_number),
        href=f"#{run_anchor(run)}",
        class_=f"chip {run.outcome}",
        title=f"run {run.run_number}: {run.outcome}",
    )


def _runs(view: BenchmarkView) -> Markup:
    blocks = []
    for group in view.evals:
        configurations = []
        for cell in group.cells:
            index = view.configurations.index(cell.configuration)
            configurations.append(
                el(
                    "div",
                    el(
                        "h4",
                        el("span", "", class_=f"swatch cfg-{index}"),
                        cell.configuration,
                        " ",
                        el("span", f"{spread(cell.pass_rate)}", class_="quiet"),
                        " ",
                        el("span", [_chip(run) for run in cell.runs], class_="chips"),
                    ),
                    [_run(run) for run in cell.runs],
                    class_="configuration",
                    id=f"runs-{group.eval_id}-{cell.configuration}",
                )
            )
        blocks.append(
            el("div", el("h3", f"{group.eval_id}. {group.name}"), configurations, class_="eval")
        )
    controls = el(
        "div",
        el("button", "Open all runs", type="button", id="open-all"),
        el("button", "Close all runs", type="button", id="close-all"),
        el(
            "label",
            el("input", type="checkbox", id="only-failing"),
            " only failed and errored runs",
        ),
        class_="controls",
    )
    return el("section", el("h2", "Runs"), controls, blocks, id="runs")


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


def _triggers(triggers: Triggers) -> Markup:
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
    return el(
        "section",
        el("h2", "Triggers"),
        el(
            "p",
            el(
                "strong",
                f"{triggers.passed} of {triggers.total} queries pass",
                id="triggers-summary",
            ),
            f"; {triggers.failed} fail{about}.",
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
                _failing(view),
                flaky_section(benchmark, titles),
                _errors(view),
                _runs(view),
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
    style, script = _asset("report.css"), _asset("report.js")
    policy = (
        f"default-src 'none'; style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    skill = _skill_name(folder)
    head = el(
        "head",
        Markup('<meta charset="utf-8">'),
        el("meta", http_equiv="Content-Security-Policy", content=policy),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("title", f"{skill or 'Skill'} eval report"),
        Markup(f"<style>{style}</style>"),
    )
    body = el("body", list(_body(folder)), Markup(f"<script>{script}</script>"))
    return "<!DOCTYPE html>\n" + el("html", head, body, lang="en") + "\n"
