"""A skill's description improved by a model, skill-creator's way, against any endpoint.

The skill's trigger queries are split, stratified by ``should_trigger``, into a train and a
held-out (test) part (``holdout``, ``seed``).  Each round asks the model for a new
description given the current one, the skill's body, the other skills' descriptions, the
train queries the current one fails, and the earlier attempts with their train scores;
never a held-out query, nor a held-out score.  Each candidate is scored by trigger runs on
both parts with the other skills of its root offered (a query passes when its trigger rate
is on the right side of ``threshold``, as ``--triggers`` judges).  The best candidate is the
best on the held-out part, the shorter on a tie, the earlier on a tie of both: the original
description is candidate 0, so an improvement has to beat it.  A candidate longer than
:data:`MAX_DESCRIPTION` characters, or with which the skill fails a validation rule it did
not fail before, is refused unscored.

Recorded under ``<cassettes>/<skill>/improve/``: each round's request as
``round-<i>.json``, each candidate's runs as ``candidate-<i>/query-<j>/run-<n>.json``
(``j`` the query's place in ``triggers.json``); a replay gives the same candidates.
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ...errors import AgentSkillsError
from ..documents.benchmark_model import GitVersion
from ..documents.triggers import Candidate as CandidateEntry
from ..documents.triggers import CandidatesDocument, Passed
from ..setup.budget import PlannedConversation, TokenBudget, dry_run_text
from ..setup.eval_files import TriggerQuery, load_triggers
from ..setup.eval_options import EvalOptions
from ..setup.offered import check_offered
from ..suite.suite_runner import (
    EvalSetupError,
    configure,
    dry_run_notes,
    offered,
    query_run_cassette,
    skill_cassettes,
)
from ..verdicts.benchmark import WITH_SKILL
from .trigger_runs import SKIPPED, RoutingBatch, RoutingRun, route_all

#: The longest description the specification allows.
MAX_DESCRIPTION = 1024
#: Characters of the skill's body shown to the model.
BODY_SHOWN = 6000
CANDIDATES_FILE = "description-candidates.json"
IMPROVE_CASSETTES = "improve"

INSTRUCTIONS = """\
You improve the description of an Agent Skill. An AI agent sees only the name and the
description of every skill offered and loads the one a task needs, so the description
decides when the skill is used. Write a description that makes the agent load this skill
for the tasks it is for, and not for others (mind the other skills' descriptions): say what
the skill does and when to use it, in the third person, in plain words, at most 1024
characters. Generalise from the examples: do not list them. Answer with the new description
only, between <description> and </description>."""


class ImproveError(AgentSkillsError):
    """The description loop cannot run as asked."""


@dataclass(frozen=True)
class ImproveLoop:
    """How the description loop splits the queries and how long it goes on (``--holdout``,
    ``--seed``, ``--iterations``): the one place their defaults are written."""

    #: The share of the queries held out (in each class of ``should_trigger``).
    holdout: float = 0.4
    #: The seed of the split.
    seed: int = 0
    #: Rounds at most.
    iterations: int = 5


@dataclass(frozen=True)
class ImproveRequest:
    skill_dir: Path
    options: EvalOptions
    holdout: float = ImproveLoop.holdout
    seed: int = ImproveLoop.seed
    iterations: int = ImproveLoop.iterations
    progress: TextIO | None = None
    #: The description the loop starts from (candidate 0) instead of the skill's own, and the
    #: git ref and commit it was taken from (``--baseline git:REF``).
    start_description: str | None = None
    start_ref: str = ""
    start_commit: str = ""


@dataclass(frozen=True)
class Numbered:
    """A trigger query with its place in ``triggers.json`` (from 1)."""

    index: int
    query: TriggerQuery


@dataclass
class Candidate:
    iteration: int
    description: str
    train: Passed | None = None
    test: Passed | None = None
    refused: str = ""
    #: The train queries it fails: (query, should_trigger).
    failures: list[tuple[str, bool]] = field(default_factory=list)

    def entry(self) -> CandidateEntry:
        """The candidate as description-candidates.json lists it (``refused`` when it was)."""
        refused = {"refused": self.refused} if self.refused else {}
        return CandidateEntry(
            iteration=self.iteration,
            description=self.description,
            train=self.train,
            test=self.test,
            **refused,
        )

    def rank(self) -> tuple[float, int, int]:
        """Sorts best first: the held-out share, then the shorter, then the earlier."""
        assert self.test is not None
        share = self.test.passed / self.test.total if self.test.total else 0.0
        return (-share, len(self.description), self.iteration)


def split(queries: Sequence[Numbered], holdout: float, seed: int) -> tuple[list[Numbered], ...]:
    """(train, test): in each class of ``should_trigger``, ``holdout`` of the queries (at
    least one of a class of two or more) drawn with ``seed`` into test, in file order."""
    test: set[int] = set()
    for should in (True, False):
        group = [item.index for item in queries if item.query.should_trigger is should]
        random.Random(f"{seed}:{should}").shuffle(group)
        count = max(1, round(len(group) * holdout)) if len(group) >= 2 else 0
        test.update(group[:count])
    return (
        [item for item in queries if item.index not in test],
        [item for item in queries if item.index in test],
    )


def improvement_prompt(name: str, body: str, others: str, history: list[Candidate]) -> str:
    """The user message of a round: never a held-out query or score (only ``history``'s
    train scores and the current candidate's train failures are in it)."""
    current = next(item for item in reversed(history) if item.train is not None)
    assert current.train is not None
    missed = [query for query, should in current.failures if should]
    wrong = [query for query, should in current.failures if not should]
    tried = "\n".join(
        f"- {item.description!r}: "
        + (f"train {item.train.passed}/{item.train.total}" if item.train else item.refused)
        for item in history
    )
    return (
        f"Skill name: {name}\n\n<current-description>\n{current.description}\n"
        f"</current-description>\n\n<skill-body>\n{body[:BODY_SHOWN]}\n</skill-body>\n\n"
        f"The other skills offered beside it:\n{others or '(none)'}\n\n"
        f"On the training queries the current description passes {current.train.passed}"
        f" of {current.train.total}.\nQueries that should load the skill but did not:\n"
        f"<should-load-but-did-not>\n{_listed(missed)}\n</should-load-but-did-not>\n"
        f"Queries that should not load the skill but did:\n<should-not-load-but-did>\n"
        f"{_listed(wrong)}\n</should-not-load-but-did>\n\n"
        f"Descriptions tried so far, with their training scores:\n{tried}\n"
    )


def _listed(queries: Sequence[str]) -> str:
    return "\n".join(f"- {query}" for query in queries) or "(none)"


def parse_description(answer: str) -> str:
    """The description in a model's answer: between the tags, else the whole answer."""
    found = re.search(r"<description>(.*?)(?:</description>|$)", answer, re.S)
    text = found.group(1) if found else answer
    return " ".join(text.split())


@dataclass
class _Loop:
    """The skill, the split of its queries, the other skills offered, its cassette folder,
    and what the loop found so far."""

    request: ImproveRequest
    skills: Any
    original: Any
    train: list[Numbered]
    test: list[Numbered]
    others: list[Any]
    cassettes: Path
    #: The tokens of the whole loop (``--max-tokens``): its rounds and every candidate's runs.
    budget: TokenBudget
    candidates: list[Candidate] = field(default_factory=list)
    interrupted: bool = False
    #: Where the candidates' copies of the skill go, and the validation errors it had before.
    scratch: Path = Path()
    errors_before: set[str] = field(default_factory=set)

    def candidate_skill(self, number: int, description: str) -> tuple[Any, str]:
        """The skill with ``description`` (a copy of its folder), or None and why it is
        refused."""
        from ...skill import Skill
        from .description_edit import DescriptionEditError, replace_description

        if len(description) > MAX_DESCRIPTION:
            return None, f"{len(description)} characters, over {MAX_DESCRIPTION}"
        if not description:
            return None, "empty"
        skill_dir = self.skills.directory
        folder = self.scratch / f"candidate-{number}" / skill_dir.name
        shutil.copytree(skill_dir, folder, symlinks=True)
        text = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
        try:
            edited = replace_description(text, description)
        except DescriptionEditError as error:
            return None, str(error)
        (folder / "SKILL.md").write_bytes(edited.encode("utf-8"))
        new = _errors(folder) - self.errors_before
        if new:
            return None, "fails validate: " + "; ".join(sorted(new))
        return Skill.load(folder), ""

    def score(self, candidate: Candidate, skill: Any) -> None:
        """Both parts' scores of ``candidate`` (whose skill is ``skill``) and its train
        failures."""
        from ...repository import SkillRepository

        options = self.request.options
        queries = [*self.train, *self.test]
        runs = [
            RoutingRun(
                item.query.query,
                candidate_cassette(self.cassettes, candidate.iteration, item.index, number),
            )
            for item in queries
            for number in range(1, options.runs + 1)
        ]
        repository = SkillRepository.from_skills([*self.others, skill])
        name = self.skills.name
        what = f"candidate {candidate.iteration} of {name}"
        batch = RoutingBatch(repository, {}, runs, what, self.request.progress, self.budget)
        routed, stopped = route_all(options, batch)
        self.interrupted = self.interrupted or stopped
        if any(each.skipped for each in routed):
            candidate.refused = f"not scored: {SKIPPED}"
            return
        passed = {"train": 0, "test": 0}
        for number, item in enumerate(queries):
            mine = routed[number * options.runs : (number + 1) * options.runs]
            failed = [each.error for each in mine if each.error]
            if failed:
                raise ImproveError(
                    f"a trigger run of {name} failed ({item.query.query!r}): {failed[0]}"
                )
            rate = sum(each.loaded == name for each in mine) / len(mine)
            should = item.query.should_trigger
            meets = rate >= options.threshold if should else rate < options.threshold
            part = "train" if number < len(self.train) else "test"
            passed[part] += meets
            if part == "train" and not meets:
                candidate.failures.append((item.query.query, should))
        candidate.train = Passed(passed=passed["train"], total=len(self.train))
        candidate.test = Passed(passed=passed["test"], total=len(self.test))

    def ask(self, number: int, body: str) -> str:
        """Round ``number``'s request to the model: a new description."""
        from ...harness.runner import ServedModel
        from ..run.converse import ModelAccess
        from ..run.transport import UpstreamPool

        options = self.request.options
        others = "\n".join(f"- {skill.name}: {skill.description}" for skill in self.others)
        prompt = improvement_prompt(self.skills.name, body, others, self.candidates)
        request = {
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": prompt},
            ],
            **options.settings.model_params,
        }
        pool = UpstreamPool(options.upstream, jobs=1, retry=options.retry)
        access = ModelAccess(options, pool)
        cassette = access.cassette(round_cassette(self.cassettes, number), {})
        served = ServedModel(cassette, model_name=options.model, stream=False, in_process=True)
        try:
            answer = served.complete(request).text or ""
            served.finish()
        except AgentSkillsError:
            cassette.save_partial()
            raise
        finally:
            served.close()
            pool.close()
            self.budget.spend(cassette.tokens)
        return parse_description(answer)


def _errors(folder: Path) -> set[str]:
    """The validation errors of the skill at ``folder``, with the options pytest would use."""
    from ...config.scopes import Scopes
    from ...rules import validate
    from ...skill import Skill

    options = Scopes({}).for_path(folder, is_dir=True).validation
    return {
        f"[{finding.rule}] {finding.message}"
        for finding in validate(Skill.load(folder), options)
        if finding.is_error
    }


@dataclass
class ImproveOutcome:
    document: CandidatesDocument
    interrupted: bool


def _setup(request: ImproveRequest) -> _Loop:
    """What the loop works on; an :class:`ImproveError` for settings it cannot run with, an
    :class:`EvalSetupError` for a skill too short of queries to split."""
    if not 0 < request.holdout < 1:
        raise ImproveError(f"--holdout is a share between 0 and 1, got {request.holdout!r}")
    if request.iterations < 1:
        raise ImproveError(f"--iterations must be at least 1, got {request.iterations!r}")
    skills = configure(request.skill_dir, None)
    check_offered(offered(skills), request.options.allow_invalid_skills, request.progress)
    queries = [
        Numbered(index, query) for index, query in enumerate(load_triggers(skills.directory), 1)
    ]
    train, test = split(queries, request.holdout, request.seed)
    if not train or not test:
        raise EvalSetupError(
            f"{skills.directory}/evals/triggers.json has {len(queries)} queries: too few to"
            f" hold {request.holdout:g} of them out and train on the rest; write more"
        )
    from ...skill import Skill

    others = [
        skill for skill in skills.repositories[WITH_SKILL].skills() if skill.name != skills.name
    ]
    cassettes = skill_cassettes(request.options, skills.name, skills.directory) / IMPROVE_CASSETTES
    budget = TokenBudget(request.options.max_tokens)
    return _Loop(
        request, skills, Skill.load(skills.directory), train, test, others, cassettes, budget
    )


def round_cassette(cassettes: Path, number: int) -> Path:
    """The recording of round ``number``'s request for a new description."""
    return cassettes / f"round-{number}.json"


def candidate_cassette(cassettes: Path, iteration: int, index: int, number: int) -> Path:
    """The recording of run ``number`` of query ``index`` (its place in triggers.json) scoring
    the candidate of round ``iteration`` (0: the original description)."""
    return query_run_cassette(cassettes / f"candidate-{iteration}", index, number)


#: What a round's request asks, as a dry run shows it (its text depends on the runs before).
ROUND_ASKS = "a new description from the current one, the body and the train failures"


def improve_dry_run(request: ImproveRequest) -> str:
    """What :func:`improve_description` may do at most, as text, without a request: the
    split, then the original's trigger runs and, for each round, its request and its
    candidate's runs on both parts (the loop stops earlier once the train part passes)."""
    setup = _setup(request)
    options = request.options
    planned: list[PlannedConversation] = []
    parts = (("train", setup.train), ("held-out", setup.test))
    for iteration in range(request.iterations + 1):
        if iteration:
            round_file = round_cassette(setup.cassettes, iteration)
            planned.append(PlannedConversation(f"round {iteration}", ROUND_ASKS, 1, (round_file,)))
        planned.extend(
            PlannedConversation(
                f"candidate {iteration} {part} query {item.index} run {number}",
                item.query.query,
                options.max_turns,
                (candidate_cassette(setup.cassettes, iteration, item.index, number),),
            )
            for part, items in parts
            for item in items
            for number in range(1, options.runs + 1)
        )

    def kinds(items: list[Numbered]) -> str:
        should = sum(item.query.should_trigger for item in items)
        return f"{should} should trigger, {len(items) - should} should not"

    notes = [
        f"split: {len(setup.train)} train queries ({kinds(setup.train)}), {len(setup.test)} held"
        f" out ({kinds(setup.test)}); --holdout {request.holdout:g}, --seed {request.seed};"
        " no held-out query is shown in a round's request",
        f"rounds: at most {request.iterations} (--iterations), each 1 request and its"
        f" candidate's {(len(setup.train) + len(setup.test)) * options.runs} trigger runs; the"
        " loop stops early once the train part passes whole",
        *dry_run_notes(options, graded=False),
    ]
    title = f"description loop of {setup.skills.name}"
    return dry_run_text(title, planned, notes)


def improve_description(request: ImproveRequest) -> ImproveOutcome:
    """Run the loop; the document of description-candidates.json and the best description."""
    loop = _setup(request)
    skills = loop.skills
    with tempfile.TemporaryDirectory(prefix="agent-skills-improve-") as scratch:
        loop.scratch, loop.errors_before = Path(scratch), _errors(skills.directory)
        start = request.start_description
        first = Candidate(0, skills.description if start is None else start)
        start_skill = loop.original
        if start is not None:  # the body of today with the description of the ref
            start_skill, refused = loop.candidate_skill(0, start)
            if start_skill is None:
                raise ImproveError(
                    f"the description at {request.start_ref or 'the baseline'} cannot be the"
                    f" starting point: {refused}"
                )
        loop.score(first, start_skill)
        loop.candidates.append(first)
        body = loop.original.body
        for number in range(1, request.iterations + 1):
            scored = [item for item in loop.candidates if item.train is not None]
            if not scored or not scored[-1].failures or loop.interrupted:
                break  # nothing left to learn from the train queries
            if not loop.budget.allows_start():
                break  # --max-tokens: what is scored so far is the outcome
            description = loop.ask(number, body)
            candidate = Candidate(number, description)
            seen = next((item for item in loop.candidates if item.description == description), None)
            if seen is not None:
                candidate.refused = f"the same as candidate {seen.iteration}"
            else:
                skill, candidate.refused = loop.candidate_skill(number, description)
                if skill is not None:
                    loop.score(candidate, skill)
            loop.candidates.append(candidate)
    scored = [item for item in loop.candidates if item.test is not None]
    if not scored:
        raise ImproveError(
            f"the token budget ({loop.budget.describe()}, --max-tokens) was spent before the"
            " original description was scored; give more tokens"
        )
    best = min(scored, key=Candidate.rank)
    document = CandidatesDocument(
        skill_name=skills.name,
        original=first.description,
        holdout=request.holdout,
        seed=request.seed,
        model=request.options.model,
        runs_per_query=request.options.runs,
        threshold=request.options.threshold,
        train_queries=[item.query.query for item in loop.train],
        test_queries=[item.query.query for item in loop.test],
        candidates=[item.entry() for item in loop.candidates],
        best=best.description,
        best_iteration=best.iteration,
        tokens=loop.budget.spent,
        max_tokens=request.options.max_tokens,
    )
    if request.start_ref:  # set only then: the file has no "start" otherwise
        start_version = GitVersion(ref=request.start_ref, commit=request.start_commit)
        document = document.model_copy(update={"start": start_version})
    return ImproveOutcome(document.stamped(), loop.interrupted)
