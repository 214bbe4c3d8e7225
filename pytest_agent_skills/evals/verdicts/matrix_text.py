"""The trigger matrix in words: each line of a ``triggers-matrix.json`` as ``agent-skills
triggers`` prints it and as the pytest item ``skills trigger matrix`` fails with it, and a
skill's false triggers and a collision as the report says them too, written once here."""

from __future__ import annotations

from dataclasses import dataclass

from ..documents.triggers import Collision, MatrixDocument, MatrixQuery, MatrixSummary, SkillScore
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


def unmeasured(document: MatrixDocument) -> list[MatrixQuery]:
    """The queries whose every run was skipped for the token budget: measured by none (as a
    trigger query of ``eval --triggers`` with no run made, they fail)."""
    return [query for query in document.queries if query.skipped and not query.runs]


def matrix_text(document: MatrixDocument) -> MatrixText:
    """The lines of a ``triggers-matrix.json`` document."""
    summary = document.summary or MatrixSummary()
    short = summary.below_bar
    skills = {
        name: f"{'FAIL' if name in short else 'ok  '}  {_skill_line(name, score)}"
        for name, score in document.per_skill.items()
    }
    never = unmeasured(document)
    made, errors = summary.runs or 0, ""
    if summary.errors:
        first = next(query for query in document.queries if query.errors)
        errors = (
            f"{summary.errors} of {made} runs failed; first ({first.owner}: {first.query!r}):"
            f"\n{first.error_messages[0] if first.error_messages else ''}"
        )
    skipped = ""
    if summary.runs_skipped:
        skipped = never_started(summary.runs_skipped, made + summary.runs_skipped, UNJUDGED) + (
            f"; {len(never)} quer(ies) with no run made fail" if never else ""
        )
    return MatrixText(
        skills=tuple(skills.values()),
        failing=tuple(line for name, line in skills.items() if name in short),
        collisions=tuple(
            f"collision: {each.a} <-> {each.b}: {collision_text(each)}"
            for each in document.collisions[:COLLISIONS_SHOWN]
        ),
        errors=errors,
        skipped=skipped,
        summary=(
            f"{summary.skills} skills, {summary.queries} queries, {made} runs; {len(short)}"
            f" skill(s) below a bar (recall {_bar(document.min_recall)}, precision"
            f" {_bar(document.min_precision)})"
        ),
        failed=bool(short or summary.errors or never),
    )


def _skill_line(name: str, score: SkillScore) -> str:
    went = false_triggers_text(score)
    return (
        f"{name}: recall {_score(score.recall)} ({score.hits}/{score.should_trigger_runs}),"
        f" precision {_score(score.precision)}" + (f"; false triggers: {went}" if went else "")
    )


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _bar(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def false_triggers_text(score: SkillScore) -> str:
    """A skill's false triggers: the skills its queries went to, most first, then its own
    should-not queries it loaded (``csv-tools 4, its own should-not queries 2``); empty when
    there is none."""
    went = sorted(score.false_triggers.items(), key=lambda item: (-item[1], item[0]))
    shown = [f"{other} {count}" for other, count in went]
    if score.own_false_triggers:
        shown.append(f"its own should-not queries {score.own_false_triggers}")
    return ", ".join(shown)


def collision_text(collision: Collision) -> str:
    """``6 runs (csv-tools took 4, sheet-tools took 2)``."""
    return (
        f"{collision.count} runs ({collision.a} took {collision.a_took_b}, {collision.b} took"
        f" {collision.b_took_a})"
    )
