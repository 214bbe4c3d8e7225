"""Run a skill's evals: every eval ``runs`` times in each configuration, up to ``jobs`` at
once, and its trigger queries; progress on a stream; Ctrl-C keeps what finished.

Configurations: ``with_skill`` (the skill's roots), ``without_skill`` (the same roots
without that skill, its other skills kept) or, given a baseline folder, ``baseline`` (the
same roots with that older version of the skill instead).
"""

from __future__ import annotations

import contextlib
import datetime
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

from ...errors import AgentSkillsError
from ...harness.conversation import Conversation
from ..documents.benchmark_model import BenchmarkDocument, GitVersion, Metadata
from ..documents.triggers import Totals, TriggerResult, TriggerResultsDocument
from ..run.converse import ModelAccess, converse
from ..run.grader_output import weakest
from ..run.one_run import RunPlan, crashed, interrupted, run_eval, skipped
from ..run.run_result import EvalRunResult, RunKey
from ..run.transport import UpstreamPool
from ..setup.budget import PlannedConversation, TokenBudget, dry_run_text
from ..setup.eval_files import EvalCase, TriggerQuery, load_evals, load_triggers, read_inputs
from ..setup.eval_options import EvalOptions
from ..setup.eval_runtime import eval_runtime
from ..setup.judges import same_grader
from ..setup.offered import check_offered
from ..verdicts.benchmark import (
    BASELINE,
    WITH_SKILL,
    WITH_SKILL_REPEAT,
    WITHOUT_SKILL,
    benchmark_document,
)
from .grader_check import checked_grader

if TYPE_CHECKING:
    from ...workspace import Runtime

#: How long in-flight runs get to end after Ctrl-C before they are given up, in seconds.
STOP_GRACE = 10.0

Plan = TypeVar("Plan")
Result = TypeVar("Result")


class EvalSetupError(AgentSkillsError):
    """The skill, its roots or the baseline cannot be evaluated as asked."""


@dataclass(frozen=True)
class EvalRequest:
    """What to evaluate and how."""

    skill_dir: Path
    options: EvalOptions = field(default_factory=EvalOptions)
    baseline: Path | None = None
    #: Only these eval ids (all when empty).
    only: tuple[int, ...] = ()
    progress: TextIO | None = None
    #: An A/A run: the with-skill configuration twice (``with_skill``, ``with_skill_repeat``).
    calibrate: bool = False
    #: ``--baseline git:REF``: the ref and commit :attr:`baseline` was taken from.
    baseline_ref: str = ""
    baseline_commit: str = ""


@dataclass
class Skills:
    """The skill and the repositories of its configurations."""

    name: str
    description: str
    directory: Path
    repositories: dict[str, Any]
    roots: dict[str, str]


@dataclass
class BenchmarkOutcome:
    document: BenchmarkDocument
    runs: list[EvalRunResult]
    interrupted: bool
    #: The evals run (their eval_metadata.json).
    evals: tuple[EvalCase, ...] = ()
    #: The tokens every answer of the eval reported, grader included.
    tokens: int = 0


@dataclass
class TriggerOutcome:
    document: TriggerResultsDocument
    interrupted: bool


def configure(skill_dir: Path, baseline: Path | None, calibrate: bool = False) -> Skills:
    """The skill at ``skill_dir`` and its configurations' repositories (with ``calibrate``,
    the with-skill one twice)."""
    from ...repository import SkillRepository
    from ...skill import Skill

    skill_dir = Path(skill_dir)
    if not (skill_dir / "SKILL.md").is_file():
        raise EvalSetupError(f"{skill_dir}: not a skill folder (no SKILL.md)")
    skill = Skill.load(skill_dir)
    root = skill_dir.resolve().parent
    everything = SkillRepository([root])
    found = everything.get(skill.name) if skill.name in everything else None
    if found is None or found.directory.resolve() != skill_dir.resolve():
        raise EvalSetupError(
            f"{skill_dir}: the skill {skill.name!r} is not the one its root {root} gives by that"
            " name (a duplicate name?); give every skill of the root its own name"
        )
    others = [item for item in everything.skills() if item.name != skill.name]
    repositories: dict[str, Any] = {WITH_SKILL: everything}
    roots = {str(root): "<skills-root-0>"}
    if calibrate:
        if baseline is not None:
            raise EvalSetupError(
                "--calibrate runs the skill against itself; it takes no --baseline"
            )
        repositories[WITH_SKILL_REPEAT] = everything
    elif baseline is None:
        repositories[WITHOUT_SKILL] = SkillRepository.from_skills(others)
    else:
        if not (Path(baseline) / "SKILL.md").is_file():
            raise EvalSetupError(f"--baseline {baseline}: not a skill folder (no SKILL.md)")
        older = Skill.load(Path(baseline))
        if older.name != skill.name:
            raise EvalSetupError(
                f"--baseline {baseline}: the skill there is {older.name!r}, not {skill.name!r}"
                " (a baseline is an earlier version of the same skill)"
            )
        repositories[BASELINE] = SkillRepository.from_skills([*others, older])
        roots[str(Path(baseline).resolve())] = "<baseline>"
    return Skills(skill.name, skill.description, skill_dir, repositories, roots)


def offered(skills: Skills) -> list[Any]:
    """Every skill some configuration offers the model, once each."""
    unique = {
        skill.skill_file: skill
        for repository in skills.repositories.values()
        for skill in repository.skills()
    }
    return list(unique.values())


#: Grader requests of one run at most: the grader is asked again once (see ``grader.grade``).
GRADER_REQUESTS = 2


def run_benchmark(request: EvalRequest) -> BenchmarkOutcome:
    """Every run of the skill's evals; a failed run is in the results, never raised."""
    options = request.options
    skills, evals, plans = _eval_plans(request)
    progress = Progress(request.progress, len(plans), f"evals of {skills.name}")
    budget = TokenBudget(options.max_tokens)
    figures = checked_grader(options, request.progress)
    with eval_runtime(options) as runtime:
        results, stopped = run_all(
            options,
            plans,
            run_eval,
            Failures(interrupted, crashed, skipped),
            progress.run_done,
            budget,
            runtime=runtime,
        )
    meta = Metadata(
        skill_name=skills.name,
        skill_path=_shown_path(skills.directory),
        executor_model=options.model,
        grader_model=options.grader,
        grader_output=weakest(result.grader_output for result in results),
        timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        runs_per_configuration=options.runs,
        configurations=list(skills.repositories),
        min_pass_rate=options.min_pass_rate,
        require=None if options.require in ("", "none") else options.require,
        regraded=options.regrade,
        runtime=runtime.name,
        trust_grader=options.trust_grader,
        same_grader=same_grader(options.model, options.grader) or None,
        grader_check=figures,
    )
    if request.baseline_ref:  # the field is there only with --baseline git:REF
        baseline = GitVersion(ref=request.baseline_ref, commit=request.baseline_commit)
        meta = meta.model_copy(update={"baseline": baseline})
    document = benchmark_document(meta, results)
    return BenchmarkOutcome(document, results, stopped, evals, budget.spent)


def _eval_plans(request: EvalRequest) -> tuple[Skills, tuple[EvalCase, ...], list[RunPlan]]:
    """The skill, its evals (``request.only`` of them) and every run to make of them."""
    options = request.options
    skills = configure(request.skill_dir, request.baseline, request.calibrate)
    check_offered(offered(skills), request.options.allow_invalid_skills, request.progress)
    evals = load_evals(skills.directory, skills.name).evals
    if request.only:
        unknown = sorted(set(request.only) - {case.id for case in evals})
        if unknown:
            raise EvalSetupError(
                f"no eval with id {unknown} in {skills.directory}/evals/evals.json"
            )
        evals = tuple(case for case in evals if case.id in request.only)
    cassettes = skill_cassettes(options, skills.name, skills.directory)
    inputs = {case.id: read_inputs(skills.directory, case) for case in evals}
    plans = [
        RunPlan(
            RunKey(case.id, configuration, number),
            case,
            repository,
            skills.directory,
            skills.roots,
            cassettes / f"eval-{case.id}" / configuration,
            cassettes / "regrade" / f"eval-{case.id}" / configuration if options.regrade else None,
            inputs[case.id],
        )
        for case in evals
        for configuration, repository in skills.repositories.items()
        for number in range(1, options.runs + 1)
    ]
    return skills, evals, plans


def dry_run(request: EvalRequest, triggers: bool = False) -> str:
    """What :func:`run_benchmark` (or, with ``triggers``, :func:`run_triggers`) would do, as
    text, without a request: every conversation, the most requests it may make, the tokens
    its recording used where there is one, and the budgets."""
    options = request.options
    if triggers:
        skills, _queries, cassettes, trigger_plans = _trigger_plans(request)
        title = f"trigger queries of {skills.name}"
        planned = [
            PlannedConversation(
                f"query {plan.index} run {plan.run_number}",
                plan.query,
                options.max_turns,
                (query_run_cassette(cassettes, plan.index, plan.run_number),),
            )
            for plan in trigger_plans
        ]
    else:
        skills, _evals, plans = _eval_plans(request)
        title = f"evals of {skills.name}"
        planned = [
            PlannedConversation(
                f"eval {run.key.eval_id} {run.key.configuration} run {run.key.run_number}",
                run.case.prompt,
                options.max_turns + (GRADER_REQUESTS if run.case.graded else 0),
                (run.cassette(".json"), run.cassette(".grader.json")),
            )
            for run in plans
        ]
    notes = dry_run_notes(options, graded=not triggers)
    return dry_run_text(title, planned, notes)


def dry_run_notes(options: EvalOptions, graded: bool) -> list[str]:
    """The lines under a dry run's conversations: how many requests a run may make (with
    ``graded``, its grader's too), the budgets, the record mode and the models."""
    return [
        f"requests: at most {options.max_turns} model turns a run (--max-turns)"
        + (f", and {GRADER_REQUESTS} grader requests a graded run" if graded else "")
        + f"; each sent up to {options.retry.attempts} times when the endpoint asks again"
        " (--attempts)",
        "budgets: "
        + ", ".join(
            (
                f"{options.max_run_tokens} tokens a run (--max-run-tokens)"
                if options.max_run_tokens
                else "no cap a run (--max-run-tokens)",
                f"{options.max_tokens} tokens in all (--max-tokens)"
                if options.max_tokens
                else "no budget in all (--max-tokens)",
            )
        ),
        f"record mode {options.record_mode}, model {options.model}"
        + (f", grader {options.grader}" if graded else ""),
    ]


@dataclass(frozen=True)
class TriggerRun:
    """What one run of a trigger query gave."""

    triggered: bool
    error: str = ""
    #: Never started: the eval's token budget was spent.
    skipped: bool = False


@dataclass(frozen=True)
class TriggerPlan:
    index: int
    query: str
    run_number: int


def _trigger_plans(
    request: EvalRequest,
) -> tuple[Skills, tuple[TriggerQuery, ...], Path, list[TriggerPlan]]:
    """The skill, its trigger queries, their cassette folder and every run to make of them."""
    skills = configure(request.skill_dir, None)
    check_offered(offered(skills), request.options.allow_invalid_skills, request.progress)
    queries = tuple(load_triggers(skills.directory))
    cassettes = skill_cassettes(request.options, skills.name, skills.directory) / "triggers"
    plans = [
        TriggerPlan(index, query.query, number)
        for index, query in enumerate(queries, 1)
        for number in range(1, request.options.runs + 1)
    ]
    return skills, queries, cassettes, plans


def run_triggers(request: EvalRequest) -> TriggerOutcome:
    """The trigger rate of each query of ``evals/triggers.json``."""
    options = request.options
    skills, queries, cassettes, plans = _trigger_plans(request)

    def one(access: ModelAccess, plan: TriggerPlan) -> TriggerRun:
        conversation = Conversation(
            skills.repositories[WITH_SKILL],
            plan.query,
            cassette=query_run_cassette(cassettes, plan.index, plan.run_number),
            max_turns=access.options.max_turns,
        )
        conversed = converse(access, conversation, skills.roots, stop_on_load=skills.name)
        return TriggerRun(
            conversed.triggered, "" if conversed.error is None else str(conversed.error)
        )

    progress = Progress(request.progress, len(plans), f"trigger queries of {skills.name}")
    failures: Failures[TriggerPlan, TriggerRun] = Failures(
        stopped_before=lambda plan: TriggerRun(False, "interrupted"),
        crashed=lambda plan, error: TriggerRun(False, f"{type(error).__name__}: {error}"),
        skipped=lambda plan: TriggerRun(False, skipped=True),
    )
    with eval_runtime(options) as runtime:
        outcomes, stopped = run_all(
            options,
            plans,
            one,
            failures,
            lambda result: progress.done(result.triggered, 0),
            runtime=runtime,
        )
    results = []
    for index, query in enumerate(queries, 1):
        pairs = zip(plans, outcomes, strict=True)
        mine = [outcome for plan, outcome in pairs if plan.index == index and not outcome.skipped]
        left_out = sum(1 for plan in plans if plan.index == index) - len(mine)
        triggers = sum(1 for outcome in mine if outcome.triggered)
        errors = [outcome.error for outcome in mine if outcome.error]
        rate = triggers / len(mine) if mine else 0.0
        meets = rate >= options.threshold if query.should_trigger else rate < options.threshold
        result = {
            "query": query.query,
            "should_trigger": query.should_trigger,
            "trigger_rate": round(rate, 4),
            "triggers": triggers,
            "runs": len(mine),
            "errors": len(errors),
            "error_messages": errors,
            "skipped": left_out,
            "pass": meets and not errors and bool(mine),  # the field's name, a keyword
        }
        results.append(TriggerResult.model_validate(result))
    passed = sum(result.passed for result in results)
    document = TriggerResultsDocument(
        skill_name=skills.name,
        description=skills.description,
        model=options.model,
        threshold=options.threshold,
        runs_per_query=options.runs,
        runtime=runtime.name,
        results=results,
        summary=Totals(total=len(results), passed=passed, failed=len(results) - passed),
    )
    return TriggerOutcome(document.stamped(), stopped)


@dataclass(frozen=True)
class Failures(Generic[Plan, Result]):
    """How :func:`run_all` makes the result of a plan whose work did not give one."""

    #: A plan the eval was stopped (Ctrl-C) before.
    stopped_before: Callable[[Plan], Result]
    #: A plan whose work raised (a bug, recorded against that run rather than ending the others).
    crashed: Callable[[Plan, Exception], Result]
    #: A plan never started because the eval's token budget was spent.
    skipped: Callable[[Plan], Result]


def run_all(
    options: EvalOptions,
    plans: Sequence[Plan],
    work: Callable[[ModelAccess, Plan], Result],
    failures: Failures[Plan, Result],
    done: Callable[[Result], None],
    budget: TokenBudget | None = None,
    *,
    runtime: Runtime | None = None,
) -> tuple[list[Result], bool]:
    """``work`` for every plan, up to ``options.jobs`` at once, results in plan order.

    The model's commands run in ``runtime``; without one, in the one
    :func:`~..setup.eval_runtime.eval_runtime` opens for ``options`` (and closes at the end).

    ``failures`` makes the result of a plan that did not run or whose work raised.  Every
    answer's tokens count in ``budget`` (default: one of ``options.max_tokens``); once it is
    spent, no plan starts: the rest are ``failures.skipped``.

    Ctrl-C (KeyboardInterrupt) stops the eval: no new run starts, runs waiting to ask the
    upstream again stop waiting, the runs going on get :data:`STOP_GRACE` seconds to end
    (their next request is refused), and every run that did not finish is
    ``stopped_before(plan)``; the second value says whether that happened.
    """
    if runtime is None:
        with eval_runtime(options) as opened:
            return run_all(options, plans, work, failures, done, budget, runtime=opened)
    _warm_up()
    pool = UpstreamPool(options.upstream, jobs=options.jobs, retry=options.retry)
    access = ModelAccess(options, pool, runtime, budget or TokenBudget(options.max_tokens))
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for index in range(len(plans)):
        todo.put(index)
    finished: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()

    def worker() -> None:
        while not pool.stop.is_set():
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            outcome: Any
            if not access.budget.allows_start():
                outcome = failures.skipped(plans[index])
            else:
                try:
                    outcome = work(access, plans[index])
                except Exception as error:  # a bug: this run's failure, not the eval's
                    outcome = failures.crashed(plans[index], error)
            finished.put((index, outcome))

    # Daemon threads: a run blocked on a slow endpoint after Ctrl-C must not hold the exit.
    threads = [
        threading.Thread(target=worker, name=f"agent-skills-eval-{number}", daemon=True)
        for number in range(min(options.jobs, len(plans)))
    ]
    for thread in threads:
        thread.start()
    results: dict[int, Any] = {}
    stopped = False
    try:
        while len(results) < len(plans):
            index, outcome = finished.get()
            results[index] = outcome
            done(outcome)
    except KeyboardInterrupt:
        stopped = True
        pool.stop.set()
        deadline = time.monotonic() + STOP_GRACE
        try:
            while any(thread.is_alive() for thread in threads) and time.monotonic() < deadline:
                with contextlib.suppress(queue.Empty):
                    index, outcome = finished.get(timeout=0.05)
                    results[index] = outcome
        except KeyboardInterrupt:  # a second Ctrl-C: give the runs going on up now
            pass
        while True:
            try:
                index, outcome = finished.get_nowait()
            except queue.Empty:
                break
            results[index] = outcome
    finally:
        pool.close()
    return [
        results[index] if index in results else failures.stopped_before(plan)
        for index, plan in enumerate(plans)
    ], stopped


def _warm_up() -> None:
    """Import the HTTP stack and start the loopback server in this thread: modules imported
    for the first time by several runs at once are seen half-initialised by some."""
    import httpx  # noqa: F401
    import openai  # noqa: F401

    from ...harness.in_process import in_process_http_client
    from ...harness.server import shared_server

    in_process_http_client(shared_server())


class Progress:
    """``[done/total] ... passing so far, tokens`` lines on a stream (stderr)."""

    def __init__(self, stream: TextIO | None, total: int, what: str) -> None:
        self.stream = stream
        self.total = total
        self.what = what
        self.count = 0
        self.passing = 0
        self.tokens = 0
        self.errors = 0
        self.skipped = 0
        self.started = time.perf_counter()

    def run_done(self, result: EvalRunResult) -> None:
        if result.error:
            self.errors += 1
        self.skipped += result.skipped
        passing = not result.error and result.total > 0 and result.passed == result.total
        self.done(passing, result.tokens)

    def done(self, passing: bool, tokens: int) -> None:
        self.count += 1
        self.passing += passing
        self.tokens += tokens
        if self.stream is None:
            return
        errors = f", {self.errors} error(s)" if self.errors else ""
        if self.skipped:
            errors += f", {self.skipped} skipped (budget)"
        print(
            f"[{self.count}/{self.total}] {self.what}: {self.passing} passing so far{errors},"
            f" {self.tokens} tokens, {time.perf_counter() - self.started:.1f} s",
            file=self.stream,
            flush=True,
        )


def skill_cassettes(options: EvalOptions, name: str, directory: Path) -> Path:
    """The cassette folder of the skill ``name`` at ``directory``, refused inside the skill:
    the commands of the runs going on would see the recordings of the others change the
    skill's files."""
    folder = options.cassette_dir(name)
    if folder.resolve().is_relative_to(directory.resolve()):
        raise EvalSetupError(
            f"the eval cassettes of {name} would be in {folder}, inside the skill folder"
            f" {directory}; keep them outside it (set skills_eval_cassettes, flag"
            " --cassettes, to another folder)"
        )
    return folder


def query_run_cassette(folder: Path, index: int, run_number: int) -> Path:
    """The recording of run ``run_number`` of the trigger query ``index`` (its place in
    triggers.json, from 1) under ``folder``."""
    return folder / f"query-{index}" / f"run-{run_number}.json"


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when inside it (the same on every checkout)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(Path(path).resolve())
