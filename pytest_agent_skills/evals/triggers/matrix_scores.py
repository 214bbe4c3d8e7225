"""The scores of a repository's trigger matrix: per skill precision, recall and false
triggers, and the collisions between skills, from the count of runs that loaded each skill
for each query (docs/evals.md, "Which skill fires").

How a run is judged, for a query owned by skill ``O`` that loaded ``L`` (a skill or
``none``); a run that failed (its ``errors``) or was never started for the token budget (its
``skipped``) is not judged at all:

- ``should_trigger: true``: right when ``L`` is ``O`` (a hit of ``O``); otherwise a miss of
  ``O``, and when ``L`` is another skill, a false trigger: ``L`` took ``O``'s query.
- ``should_trigger: false``: wrong when ``L`` is ``O`` (a false trigger of ``O`` on its own
  near miss, counted in its ``own_false_triggers``, never as a false trigger "to" ``O``);
  another skill or ``none`` is not judged (the query may well belong to another skill, or to
  none).

``recall(S)`` is the hits of ``S`` over the runs of ``S``'s should-trigger queries;
``precision(S)`` the hits of ``S`` over the judged runs that loaded ``S`` (its hits, the
other skills' should-trigger queries it took, and its own should-not queries it loaded).
Either is ``None`` where its denominator is 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..documents.triggers import Collision, MatrixQuery, SkillScore
from .trigger_runs import NONE


@dataclass
class _Tally:
    hits: int = 0
    positives: int = 0
    wrong_loads: int = 0
    #: Runs of this skill's should-trigger queries that loaded another skill, by that skill.
    went_to: Counter[str] = field(default_factory=Counter)
    #: Runs of another skill's should-trigger queries that loaded this one, by their owner.
    took_from: Counter[str] = field(default_factory=Counter)
    #: Runs of this skill's should-not queries that loaded it.
    own_false: int = 0
    misses_none: int = 0


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def per_skill(skills: Sequence[str], queries: Sequence[MatrixQuery]) -> dict[str, SkillScore]:
    """``per_skill`` of triggers-matrix.json: for each skill, ``precision``, ``recall``,
    ``false_triggers`` (the runs of its should-trigger queries that loaded another skill, by
    the skill they went to), ``own_false_triggers`` (the runs of its should-not queries that
    loaded it), and the counts behind them."""
    tallies = {name: _Tally() for name in skills}
    for counts in queries:
        owner = tallies[counts.owner]
        for loaded, number in counts.loaded.items():
            if counts.should_trigger:
                owner.positives += number
                if loaded == counts.owner:
                    owner.hits += number
                elif loaded == NONE:
                    owner.misses_none += number
                else:
                    owner.went_to[loaded] += number
                    if loaded in tallies:
                        tallies[loaded].wrong_loads += number
                        tallies[loaded].took_from[counts.owner] += number
            elif loaded == counts.owner:
                owner.own_false += number
                owner.wrong_loads += number
    return {
        name: SkillScore(
            precision=_ratio(tally.hits, tally.hits + tally.wrong_loads),
            recall=_ratio(tally.hits, tally.positives),
            false_triggers=dict(sorted(tally.went_to.items())),
            own_false_triggers=tally.own_false,
            hits=tally.hits,
            should_trigger_runs=tally.positives,
            missed_to_none=tally.misses_none,
            wrong_loads=tally.wrong_loads,
            took_from=dict(sorted(tally.took_from.items())),
        )
        for name, tally in tallies.items()
    }


def collisions(queries: Sequence[MatrixQuery]) -> list[Collision]:
    """Pairs of skills where one took the other's should-trigger queries, worst first: the
    most runs taken either way, then the pairs that take from each other most evenly, then
    by name.  ``a_took_b`` counts the runs of ``b``'s queries that loaded ``a``."""
    took: Counter[tuple[str, str]] = Counter()
    for counts in queries:
        if not counts.should_trigger:
            continue
        for loaded, number in counts.loaded.items():
            if loaded not in (NONE, counts.owner):
                took[(loaded, counts.owner)] += number
    pairs = {(min(taker, owner), max(taker, owner)) for taker, owner in took}
    ranked = sorted(
        pairs,
        key=lambda pair: (
            -(took[pair] + took[pair[::-1]]),
            -min(took[pair], took[pair[::-1]]),
            pair,
        ),
    )
    return [
        Collision(
            a=a,
            b=b,
            count=took[(a, b)] + took[(b, a)],
            a_took_b=took[(a, b)],
            b_took_a=took[(b, a)],
        )
        for a, b in ranked
    ]


def below_bars(
    scores: Mapping[str, SkillScore], min_recall: float, min_precision: float
) -> dict[str, list[str]]:
    """The skills whose recall or precision is below its bar, each with what falls short
    (a score that is ``None`` has nothing to fall short of)."""
    short: dict[str, list[str]] = {}
    for name, score in scores.items():
        problems = []
        if score.recall is not None and score.recall < min_recall:
            problems.append(f"recall {score.recall:.2f} < {min_recall:g}")
        if score.precision is not None and score.precision < min_precision:
            problems.append(f"precision {score.precision:.2f} < {min_precision:g}")
        if problems:
            short[name] = problems
    return short
