"""The trigger matrix in words: each line of a ``triggers-matrix.json`` as ``agent-skills
triggers`` prints it and as the pytest item ``skills trigger matrix`` fails with it, written
once here so that both say the same."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..documents.triggers import MatrixDocument, MatrixSummary, SkillScore
from ..setup.budget import UNJUDGED, never_started

#: Collisions in the text (all of them are in triggers-matrix.json and the report).
COLLISIONS_SHOWN = 5


@dataclass(frozen=True)
class MatrixText:
    """The lines of one matrix document."""

    #: One line per skill, its scores; those below a bar marked ``FAIL``.
    skills: tuple[str, ...]
    #: The lines of the skills below a bar alone.
    failing: tuple[str, ...]
    #: The worst collisions, each with who took whose queries.
    collisions: tuple[str, ...]
    #: The runs that failed and the first one's message; empty when none did.
    errors: str
    #: The runs never started for the token budget; empty when none was.
    skipped: str
    #: The counts and the bars, last.
    summary: str
    #: Whether the matrix fails: a skill below a bar, a run failed, or a query never measured.
    failed: bool

    def failure(self) -> str:
        """The pytest failure text: the lines of the failing skills, then the rest."""
        parts = (*self.failing, *self.collisions, self.errors, self.skipped, self.summary)
        return "\n".join(part for part in parts if part)


def matrix_text(document: MatrixDocument | Mapping[str, Any]) -> MatrixText:
    """The lines of a ``triggers-matrix.json`` document (a mapping is read as one)."""
    if not isinstance(document, MatrixDocument):
        document = MatrixDocument.model_validate(document)
    summary = document.summary or MatrixSummary()
    short = summary.below_bar
    skills = {
        name: f"{'FAIL' if name in short else 'ok  '}  {_skill_line(name, score)}"
        for name, score in document.per_skill.items()
    }
    # Queries whose every run was skipped for the token budget: measured by none, they fail
    # (as a trigger query of ``eval --triggers`` with no run made).
    never = [query for query in document.queries if query.skipped and not query.runs]
    errors = ""
    if summary.errors:
        first = next(query for query in document.queries if query.errors)
        errors = (
            f"{summary.errors} of {summary.runs} runs failed; first ({first.owner}:"
            f" {first.query!r}):\n{first.error_messages[0]}"
        )
    skipped = ""
    if summary.runs_skipped:
        skipped = never_started(
            summary.runs_skipped, (summary.runs or 0) + summary.runs_skipped, UNJUDGED
        ) + (f"; {len(never)} quer(ies) with no run made fail" if never else "")
    return MatrixText(
        skills=tuple(skills.values()),
        failing=tuple(line for name, line in skills.items() if name in short),
        collisions=tuple(
            f"collision: {each.a} <-> {each.b}: {each.count} runs ({each.a} took"
            f" {each.a_took_b}, {each.b} took {each.b_took_a})"
            for each in document.collisions[:COLLISIONS_SHOWN]
        ),
        errors=errors,
        skipped=skipped,
        summary=(
            f"{summary.skills} skills, {summary.queries} queries, {summary.runs} runs;"
            f" {len(short)} skill(s) below a bar (recall {document.min_recall:g}, precision"
            f" {document.min_precision:g})"
        ),
        failed=bool(short or summary.errors or never),
    )


def _skill_line(name: str, score: SkillScore) -> str:
    went = false_triggers_text(score)
    return (
        f"{name}: recall {_score(score.recall)} ({score.hits}/"
        f"{score.should_trigger_runs}), precision {_score(score.precision)}"
        + (f"; false triggers: {went}" if went else "")
    )


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def false_triggers_text(score: SkillScore) -> str:
    """A skill's false triggers as a line shows them: the skills its queries went to, then
    its own should-not queries it loaded (``csv-tools 4, its own should-not queries 2``);
    empty when there is none."""
    went = [f"{other} {count}" for other, count in score.false_triggers.items()]
    if score.own_false_triggers:
        went.append(f"its own should-not queries {score.own_false_triggers}")
    return ", ".join(went)
