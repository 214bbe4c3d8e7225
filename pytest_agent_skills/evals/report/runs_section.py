"""The runs of report.html: the failing expectations, the errors, and each run with its
transcript (cut to size) and output files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from ..verdicts.results_view import FailingExpectation
from .chart import spread
from .markup import Markup, column_heads, el
from .values import Message, OutputFile, Run, ToolCall, Transcript
from .view import BenchmarkView

TRANSCRIPT_TEXT_LIMIT = 8_000  # characters of one message, argument or tool result shown
RUN_TRANSCRIPT_LIMIT = 60_000  # characters of one run's transcript shown
EVIDENCE_SHOWN = 3  # distinct evidence texts shown before "more"


def run_anchor(run: Run) -> str:
    # Configuration names have no spaces (report_input checks them): each makes its own id.
    return f"run-{run.eval_id}-{run.configuration}-{run.run_number}"


def count(number: int, noun: str) -> str:
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
    if run.result.errors:
        return el("span", count(run.result.errors, "error"), class_="badge error")
    return el("span", run.outcome, class_=f"badge {run.outcome}")


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


def _failing_item(item: FailingExpectation[Run]) -> Markup:
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
            el("span", item.failed_in, class_="counts"),
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


def failing_section(view: BenchmarkView) -> Markup:
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


def errors_section(view: BenchmarkView) -> Markup:
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
            el(
                "td",
                el("pre", run.error.message) if run.error else count(run.result.errors, "error"),
            ),
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
        el("h4", f"Transcript ({count(calls, 'tool call')})"),
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
        f"{run.result.passed}/{run.result.total} expectations · {run.result.time_seconds:.1f} s · "
        f"{run.result.tokens:,} tokens · {count(run.result.tool_calls, 'tool call')}"
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
        el("ul", [el("li", note) for note in run.entry.notes], class_="notes")
        if run.entry.notes
        else None,
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


def runs_section(view: BenchmarkView) -> Markup:
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
