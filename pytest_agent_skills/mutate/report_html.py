"""The mutation report as one self-contained HTML page in the eval report's style: its style
sheet and its escaping markup helpers (:mod:`pytest_agent_skills.evals.report`), no script,
nothing the page asks for beyond itself."""

from __future__ import annotations

from ..evals.report.markup import Markup, column_heads, el, html_page
from .report import HINTS, MutationReport, score_text
from .runner import ERROR, KILLED, SURVIVED, TIMEOUT, MutationRun

#: The eval report's badge of each status: a killed mutant is the suite passing.
_BADGES = {KILLED: "pass", SURVIVED: "fail", ERROR: "error", TIMEOUT: "error"}


def html_report(report: MutationReport, run: MutationRun) -> str:
    title = f"{report.skill}: mutation report"
    main = el("main", _summary(report, run), _survivors(report), _table(report, run))
    return html_page(title, [_header(report, title), main])


def _header(report: MutationReport, title: str) -> Markup:
    summary = report.summary
    facts = [
        ("mutants", summary.mutants), ("killed", summary.killed),
        ("survived", summary.survived), ("errors and timeouts", summary.errors),
    ]
    return el(
        "header",
        el("h1", title),
        el("dl", [el("div", el("dt", name), el("dd", value)) for name, value in facts],
           class_="facts"),
        el("nav", el("a", "Summary", href="#summary"), el("a", "Survivors", href="#survivors"),
           el("a", "Every mutant", href="#mutants")),
    )


def _summary(report: MutationReport, run: MutationRun) -> Markup:
    score = report.summary.score
    unused = [failure for failure in run.original if failure is not None]
    return el(
        "section",
        el("h2", "Summary"),
        el("div", el("div", el("h3", "mutation score"),
                     el("div", "n/a" if score is None else f"{score:.2f}", class_="big"),
                     el("div", "killed / (killed + survived)", class_="quiet"),
                     class_="card"), class_="cards"),
        el("p", score_text(report)),
        el("p", f"{len(run.passing)} of {len(run.original)} check(s) pass on the original; a"
           " mutant is killed when one of them fails on it.", class_="quiet"),
        el("ul", [el("li", f"not used (fails on the original): {failure.check}: {failure.why}")
                  for failure in unused]) if unused else None,
        id="summary",
    )


def _survivors(report: MutationReport) -> Markup:
    survivors = [entry for entry in report.mutants if entry.status == SURVIVED]
    items = [
        el(
            "article",
            el("h3", f"{entry.id} {entry.operator} ", el("code", f"{entry.file}:{entry.line}")),
            el("p", "Would kill it: ", HINTS.get(entry.operator, "")),
            el("pre", entry.diff, class_="diff"),
            id=f"mutant-{entry.id}",
        )
        for entry in survivors
    ]
    return el(
        "section",
        el("h2", f"Survivors ({len(survivors)})"),
        items or el("p", "Every judged mutant was killed."),
        id="survivors",
    )


def _table(report: MutationReport, run: MutationRun) -> Markup:
    rows = [
        el(
            "tr",
            el("td", entry.id),
            el("td", entry.operator),
            el("td", el("code", f"{entry.file}:{entry.line}")),
            el("td", el("span", entry.status, class_=f"badge {_BADGES[entry.status]}")),
            el("td", entry.killed_by or verdict.detail or ""),
            class_=f"mutant {entry.status}",
        )
        for entry, verdict in zip(report.mutants, run.verdicts, strict=True)
    ]
    return el(
        "section",
        el("h2", "Every mutant"),
        el("table", el("thead", column_heads(("id", "operator", "where", "status",
                                              "killed by / why")), el("tbody", rows))),
        id="mutants",
    )
