"""The report's sections on which skill fires: the trigger matrix of a repository (a
confusion matrix of owner x skill loaded, shaded, per skill scores, the worst collisions)
and the description candidates of the improvement loop.

The matrix is one SVG drawn on the server: its cells are shaded with ``fill-opacity``
(a presentation attribute the page's Content-Security-Policy allows, unlike inline
styles), each with a tooltip; at :data:`CELL` pixels a cell, fifty skills make a square
of 700 pixels a side, read without scrolling.
"""

from __future__ import annotations

from ..documents.triggers import (
    CandidatesDocument,
    MatrixDocument,
    MatrixSummary,
    Passed,
    SkillScore,
)
from ..setup.budget import UNJUDGED, never_started
from ..verdicts.matrix_text import collision_text, false_triggers_text
from .chart import percent
from .markup import Markup, column_heads, el

#: A cell's side, in pixels.
CELL = 14
#: Pixels a character of a label takes (at the labels' font size).
LABEL_CHAR = 6.2
#: Collisions listed under the matrix (all are in triggers-matrix.json).
COLLISIONS_SHOWN = 10
NONE = "none"


def _table(labels: tuple[str, ...], rows: list[Markup], kind: str) -> Markup:
    head = el("thead", column_heads(labels))
    return el("table", head, el("tbody", rows), class_=kind)


def confusion_svg(matrix: MatrixDocument) -> Markup:
    """Rows: the owners of should-trigger queries; columns: the skill their runs loaded
    first, then ``none``.  A cell's shade is its share of the row's runs."""
    skills = list(matrix.skills)
    columns = [*skills, NONE]
    counts: dict[tuple[str, str], int] = {}
    totals: dict[str, int] = dict.fromkeys(skills, 0)
    for query in matrix.queries:
        if not query.should_trigger:
            continue
        for loaded, number in query.loaded.items():
            counts[(query.owner, loaded)] = counts.get((query.owner, loaded), 0) + number
            totals[query.owner] = totals.get(query.owner, 0) + number
    label = round(max((len(name) for name in columns), default=4) * LABEL_CHAR) + 8
    top = round(label * 0.75) + 4  # the column labels, slanted
    # The last column's label slants out to the right of the cells.
    width, height = label + CELL * len(columns) + round(label * 0.65), top + CELL * len(skills) + 4
    parts: list[Markup] = []
    for column, name in enumerate(columns):
        x = label + column * CELL + CELL // 2
        parts.append(
            el(
                "text",
                name,
                x=x,
                y=top - 4,
                transform=f"rotate(-50 {x} {top - 4})",
                class_="col-label",
            )
        )
    for row, owner in enumerate(skills):
        y = top + row * CELL
        parts.append(el("text", owner, x=label - 6, y=y + CELL - 3, class_="row-label"))
        for column, loaded in enumerate(columns):
            number = counts.get((owner, loaded), 0)
            kind = "hit" if loaded == owner else ("none" if loaded == NONE else "miss")
            share = number / totals[owner] if totals[owner] else 0.0
            tip = (
                f"{owner}'s should-trigger queries loaded {loaded}: {number} of"
                f" {totals[owner]} runs"
            )
            parts.append(
                el(
                    "rect",
                    el("title", tip),
                    x=label + column * CELL,
                    y=y,
                    width=CELL - 1,
                    height=CELL - 1,
                    fill_opacity=f"{0.08 + 0.92 * share:.2f}" if number else None,
                    class_=f"cell {kind}" + ("" if number else " empty"),
                    data_owner=owner,
                    data_loaded=loaded,
                    data_count=number,
                )
            )
            if number:
                parts.append(
                    el(
                        "text",
                        number,
                        x=label + column * CELL + (CELL - 1) / 2,
                        y=y + CELL - 4,
                        class_="count" + (" dark" if share > 0.55 else ""),
                    )
                )
    return el(
        "svg",
        parts,
        xmlns="http://www.w3.org/2000/svg",
        width=width,
        height=height,
        viewBox=f"0 0 {width} {height}",
        role="img",
        aria_label=f"confusion matrix of {len(skills)} skills: owner of the query by skill"
        " loaded first",
        class_="confusion",
    )


def _rate(value: float | None, bar: float | None) -> Markup:
    if value is None:
        return el("td", "-", class_="num quiet")
    low = bar is not None and value < bar
    return el("td", percent(value), class_="num" + (" below" if low else ""))


def _score_row(name: str, score: SkillScore, matrix: MatrixDocument) -> Markup:
    failing = name in _summary(matrix).below_bar
    return el(
        "tr",
        el("th", name, scope="row"),
        _rate(score.recall, matrix.min_recall),
        _rate(score.precision, matrix.min_precision),
        el("td", false_triggers_text(score) or "-", class_="false-triggers"),
        el(
            "td",
            el("span", "below bar", class_="badge fail")
            if failing
            else el("span", "ok", class_="badge pass"),
        ),
        class_="skill-score" + (" is-fail" if failing else ""),
    )


def _summary(matrix: MatrixDocument) -> MatrixSummary:
    return matrix.summary or MatrixSummary()


def matrix_section(matrix: MatrixDocument) -> Markup:
    summary = _summary(matrix)
    worst = matrix.collisions[:COLLISIONS_SHOWN]
    bars = []
    if matrix.min_recall is not None:
        bars.append(f"recall ≥ {matrix.min_recall:g}")
    if matrix.min_precision is not None:
        bars.append(f"precision ≥ {matrix.min_precision:g}")
    facts = [f"{len(matrix.skills)} skills", f"{len(matrix.queries)} queries"]
    if matrix.runs_per_query:
        facts.append(f"{matrix.runs_per_query} runs each")
    if matrix.model:
        facts.append(matrix.model)
    if summary.time_seconds is not None:
        facts.append(f"{summary.time_seconds:.1f} s")
    apart = []
    if summary.errors:
        apart.append(f"{summary.errors} runs failed (judged nowhere)")
    if summary.runs_skipped:
        made = summary.runs or 0
        apart.append(never_started(summary.runs_skipped, made + summary.runs_skipped, UNJUDGED))
    scores = sorted(
        matrix.per_skill.items(), key=lambda item: (item[0] not in summary.below_bar, item[0])
    )
    return el(
        "section",
        el("h2", "Which skill fires"),
        el(
            "p",
            el(
                "strong",
                f"{len(summary.below_bar)} of {len(matrix.skills)} skills below a bar",
                id="matrix-summary",
            ),
            f" ({', '.join(bars)}); {', '.join(facts)}.",
        ),
        el("p", "; ".join(apart) + ".", class_="quiet", id="matrix-apart") if apart else None,
        el("h3", "Worst collisions"),
        el(
            "ol",
            [
                el(
                    "li",
                    el("strong", f"{item.a} ⇄ {item.b}"),
                    f": {collision_text(item)}",
                    class_="collision",
                )
                for item in worst
            ],
            class_="collisions",
        )
        if worst
        else el("p", "No skill took another's queries.", class_="quiet"),
        el("h3", "Confusion matrix"),
        el(
            "p",
            "Rows: the skill owning a should-trigger query; columns: the skill its runs loaded"
            " first. Shade: the share of the row's runs. The diagonal is right.",
            class_="quiet",
        ),
        el("div", confusion_svg(matrix), class_="matrix-frame"),
        el("h3", "Per skill"),
        _table(
            ("Skill", "Recall", "Precision", "False triggers", ""),
            [_score_row(name, score, matrix) for name, score in scores],
            "skill-scores",
        ),
        id="matrix",
    )


def _split(part: Passed | None) -> str:
    if part is None:
        return "-"
    return f"{part.passed}/{part.total}"


def candidates_section(candidates: CandidatesDocument) -> Markup:
    rows = [
        el(
            "tr",
            el("td", "original" if item.iteration == 0 else str(item.iteration), class_="num"),
            el("td", el("div", item.description, class_="description-text")),
            el("td", _split(item.train), class_="num"),
            el("td", _split(item.test), class_="num"),
            el(
                "td",
                el("span", "best", class_="badge pass")
                if item.description == candidates.best and not item.refused
                else (el("span", "refused", class_="badge error") if item.refused else None),
                el("div", item.refused, class_="quiet") if item.refused else None,
            ),
            class_="candidate" + (" is-best" if item.description == candidates.best else ""),
        )
        for item in candidates.candidates
    ]
    about = []
    if candidates.holdout is not None:
        about.append(f"held out {candidates.holdout:g} of the queries")
    if candidates.seed is not None:
        about.append(f"seed {candidates.seed}")
    return el(
        "section",
        el("h2", f"Description candidates of {candidates.skill_name}"),
        el(
            "p",
            "Each candidate scored on the train and the held-out (test) queries, the other"
            " skills offered; the best is the best on the held-out queries, the shorter on a"
            " tie" + (f" ({', '.join(about)})." if about else "."),
        ),
        el("blockquote", candidates.best, class_="description", id="best-description"),
        _table(("Round", "Description", "Train", "Held out", ""), rows, "candidates"),
        id="candidates",
    )
