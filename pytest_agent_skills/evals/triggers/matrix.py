"""Repository-wide trigger evals: every skill's ``evals/triggers.json`` queries, each run
``runs`` times with every skill of the repository offered, counting which skill the model
loads first (or none); the counts make ``triggers-matrix.json`` with the scores of
:mod:`.matrix_scores`.

Each run is recorded in ``<cassettes>/<owner>/triggers-matrix/query-<i>/run-<n>.json``
(``i`` the query's place in its owner's ``triggers.json``, from 1) and replays offline like
every eval.  The recordings hold every skill's description: a description changed since is
a cassette miss for all of them, as it changes what the model chose from.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ...settings import SettingValues
from ..documents.triggers import MatrixDocument, MatrixQuery, MatrixSummary
from ..setup.budget import PlannedConversation, dry_run_text
from ..setup.eval_files import TRIGGERS_FILE, load_triggers
from ..setup.eval_options import EvalOptions, rates
from ..setup.offered import check_offered
from ..suite.suite_runner import EvalSetupError, dry_run_notes, query_run_cassette, skill_cassettes
from .matrix_scores import below_bars, collisions, per_skill
from .trigger_runs import RoutingBatch, RoutingRun, route_all

#: The folder of a skill's cassettes holding its matrix runs.
MATRIX_CASSETTES = "triggers-matrix"
#: Error messages kept per query in the document (the count is always whole).
ERROR_MESSAGES_KEPT = 3


@dataclass(frozen=True)
class MatrixBars:
    """The scores every skill must reach (``--min-recall``, ``--min-precision``)."""

    min_recall: float = 0.5
    min_precision: float = 0.5


def matrix_bars(values: SettingValues) -> MatrixBars:
    """The :class:`MatrixBars` of resolved settings; a rate outside 0..1 is a
    :class:`ConfigurationError` naming where it was set."""
    return MatrixBars(*rates(values, "skills_trigger_min_recall", "skills_trigger_min_precision"))


@dataclass(frozen=True)
class MatrixRequest:
    """Which skills (the paths' skills, found as ``validate`` finds them) and how to run."""

    paths: tuple[Path, ...]
    options: EvalOptions
    bars: MatrixBars = MatrixBars()
    progress: TextIO | None = None


@dataclass(frozen=True)
class OwnedQuery:
    """A trigger query with the skill whose ``triggers.json`` holds it."""

    owner: str
    #: Its place in the owner's ``triggers.json``, from 1 (its cassette folder).
    index: int
    query: str
    should_trigger: bool


@dataclass(frozen=True)
class RepositorySkills:
    """The skills under the paths, as one repository, and their trigger queries."""

    repository: Any
    queries: tuple[OwnedQuery, ...]
    #: Stable names of the paths in the recordings.
    roots: dict[str, str]


@dataclass
class MatrixOutcome:
    document: MatrixDocument
    interrupted: bool


def repository_skills(paths: Iterable[Path]) -> RepositorySkills:
    """The skills under ``paths`` (a ``SKILL.md``, a skill folder or a root of many) as one
    repository; an :class:`EvalSetupError` when none is found or two share a name, an
    ``EvalFileError`` for a ``triggers.json`` that cannot be used."""
    from ...listings import FolderListings
    from ...repository import SkillRepository
    from ...rules import skill_dirs
    from ...skill import Skill

    listings = FolderListings()
    given = [Path(path) for path in paths]
    folders: dict[str, Path] = {}
    for path in given:
        for folder in skill_dirs(path, listings):
            folders.setdefault(os.path.realpath(folder), folder)
    if not folders:
        shown = ", ".join(str(path) for path in given) or "."
        raise EvalSetupError(f"no skill found under {shown} (a skill is a folder holding SKILL.md)")
    skills = Skill.load_all(list(folders.values()), listings)
    repository = SkillRepository.from_skills(skills)
    if repository.duplicates:
        twice = repository.duplicates[0]
        raise EvalSetupError(
            f"two skills are named {twice.name!r}: {twice.winner} and {twice.shadowed}; the model"
            " would be offered one of them only: give each skill its own name"
        )
    queries: list[OwnedQuery] = []
    for skill in repository.skills():
        if (skill.directory / TRIGGERS_FILE).is_file():
            queries.extend(
                OwnedQuery(skill.name, index, item.query, item.should_trigger)
                for index, item in enumerate(load_triggers(skill.directory), 1)
            )
    if not queries:
        raise EvalSetupError(
            f"none of the {len(skills)} skill(s) found has {TRIGGERS_FILE}: write"
            ' [{"query": "...", "should_trigger": true}, ...] in the skills to measure'
        )
    roots = {
        os.path.abspath(path if path.is_dir() else path.parent): f"<skills-root-{number}>"
        for number, path in enumerate(given)
    }
    return RepositorySkills(repository, tuple(queries), roots)


def _runs(options: EvalOptions, found: RepositorySkills) -> list[tuple[str, RoutingRun]]:
    """Every run of the matrix, each query's ``options.runs`` in a row, in query order, each
    with its label ("<owner> query <index> run <number>")."""
    folders = {
        skill.name: skill_cassettes(options, skill.name, skill.directory)
        for skill in found.repository.skills()
    }
    return [
        (
            f"{query.owner} query {query.index} run {number}",
            RoutingRun(
                query.query,
                query_run_cassette(folders[query.owner] / MATRIX_CASSETTES, query.index, number),
            ),
        )
        for query in found.queries
        for number in range(1, options.runs + 1)
    ]


def matrix_dry_run(request: MatrixRequest) -> str:
    """What :func:`run_matrix` would do, as text, without a request: every run (its owner,
    query and run number, the most requests it may make, the tokens its recording used where
    there is one), then the limits and budgets."""
    options = request.options
    found = repository_skills(request.paths)
    check_offered(found.repository.skills(), options.allow_invalid_skills, request.progress)
    planned = [
        PlannedConversation(label, run.query, options.max_turns, (run.cassette,))
        for label, run in _runs(options, found)
    ]
    title = f"trigger matrix of {len(found.repository.skills())} skills"
    return dry_run_text(title, planned, dry_run_notes(options, graded=False))


def run_matrix(request: MatrixRequest) -> MatrixOutcome:
    """Every query's runs with the whole repository offered; the matrix document."""
    clock = time.perf_counter()
    options = request.options
    found = repository_skills(request.paths)
    skills = found.repository.skills()
    check_offered(skills, options.allow_invalid_skills, request.progress)
    runs = [run for _label, run in _runs(options, found)]
    batch = RoutingBatch(
        found.repository,
        found.roots,
        runs,
        f"trigger matrix of {len(skills)} skills",
        request.progress,
    )
    routed, stopped = route_all(options, batch)
    counts = []
    for number, query in enumerate(found.queries):
        mine = routed[number * options.runs : (number + 1) * options.runs]
        made = [each for each in mine if not each.skipped]
        failed = [each.error for each in made if each.error]
        loaded = Counter(each.loaded for each in made if not each.error)
        counts.append(
            MatrixQuery(
                query=query.query,
                owner=query.owner,
                should_trigger=query.should_trigger,
                runs=len(made),  # those that failed included, those skipped not
                loaded=dict(sorted(loaded.items())),  # failed runs loaded nothing
                errors=len(failed),
                error_messages=failed[:ERROR_MESSAGES_KEPT],
                skipped=len(mine) - len(made),  # never started: the token budget was spent
            )
        )
    names = [skill.name for skill in skills]
    wall = time.perf_counter() - clock
    return MatrixOutcome(matrix_document(names, counts, options, request.bars, wall), stopped)


def matrix_document(
    names: Sequence[str],
    counts: Sequence[MatrixQuery],
    options: EvalOptions,
    bars: MatrixBars,
    time_seconds: float | None = None,
) -> MatrixDocument:
    """triggers-matrix.json (docs/evals.md names every field); ``time_seconds`` is the wall
    time the matrix took (None for counts not measured by :func:`run_matrix`)."""
    scores = per_skill(names, counts)
    summary = MatrixSummary(
        skills=len(names),
        queries=len(counts),
        runs=sum(each.runs for each in counts),
        errors=sum(each.errors for each in counts),
        runs_skipped=sum(each.skipped for each in counts),
        below_bar=below_bars(scores, bars.min_recall, bars.min_precision),
        time_seconds=None if time_seconds is None else round(time_seconds, 3),
    )
    return MatrixDocument(
        skills=list(names),
        model=options.model,
        runs_per_query=options.runs,
        min_recall=bars.min_recall,
        min_precision=bars.min_precision,
        queries=list(counts),
        per_skill=scores,
        collisions=collisions(counts),
        summary=summary,
    ).stamped()
