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
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from ..errors import AgentSkillsError
from ..harness.conversation import Conversation
from .benchmark import (
    BASELINE,
    WITH_SKILL,
    WITH_SKILL_REPEAT,
    WITHOUT_SKILL,
    BenchmarkInfo,
    benchmark_json,
)
from .conversation import ModelAccess, converse
from .grader_output import weakest
from .isolation import eval_runtime
from .options import EvalOptions
from .results import RunKey, RunResult
from .run import RunPlan, crashed, interrupted, run_eval
from .spec import EvalCase, load_evals, load_triggers, read_inputs
from .transport import UpstreamPool

if TYPE_CHECKING:
    from ..workspace import Runtime

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
    document: dict[str, Any]
    runs: list[RunResult]
    interrupted: bool
    #: The evals run (their eval_metadata.json).
    evals: tuple[EvalCase, ...] = ()


@dataclass
class TriggerOutcome:
    document: dict[str, Any]
    interrupted: bool


def configure(skill_dir: Path, baseline: Path | None, calibrate: bool = False) -> Skills:
    """The skill at ``skill_dir`` and its configurations' repositories (with ``calibrate``,
    the with-skill one twice)."""
    from ..repository import SkillRepository
    from ..skill import Skill

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


def run_benchmark(request: EvalRequest) -> BenchmarkOutcome:
    """Every run of the skill's evals; a failed run is in the results, never raised."""
    options = request.options
    skills = configure(request.skill_dir, request.baseline, request.calibrate)
    evals = load_evals(skills.directory, skills.name).evals
    if request.only:
        unknown = sorted(set(request.only) - {case.id for case in evals})
        if unknown:
            raise EvalSetupError(
                f"no eval with id {unknown} in {skills.directory}/evals/evals.json"
            )
        evals = tuple(case for case in evals if case.id in request.only)
    cassettes = _cassettes(options, skills)
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
    progress = Progress(request.progress, len(plans), f"evals of {skills.name}")
    with eval_runtime(options) as runtime:
        results, stopped = run_all(
            options, plans, run_eval, (interrupted, crashed), progress.run_done, runtime=runtime
        )
    info = BenchmarkInfo(
        skill_name=skills.name,
        skill_path=_shown_path(skills.directory),
        executor_model=options.model,
        grader_model=options.grader,
        timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        configurations=tuple(skills.repositories),
        runs_per_configuration=options.runs,
        min_pass_rate=options.min_pass_rate,
        require="" if options.require == "none" else options.require,
        regraded=options.regrade,
        runtime=runtime.name,
        grader_output=weakest(result.grader_output for result in results),
    )
    return BenchmarkOutcome(benchmark_json(info, results), results, stopped, evals)


@dataclass(frozen=True)
class TriggerPlan:
    index: int
    query: str
    run_number: int


def run_triggers(request: EvalRequest) -> TriggerOutcome:
    """The trigger rate of each query of ``evals/triggers.json``."""
    options = request.options
    skills = configure(request.skill_dir, None)
    queries = load_triggers(skills.directory)
    cassettes = _cassettes(options, skills) / "triggers"
    plans = [
        TriggerPlan(index, query.query, number)
        for index, query in enumerate(queries, 1)
        for number in range(1, options.runs + 1)
    ]

    def one(access: ModelAccess, plan: TriggerPlan) -> tuple[bool, str]:
        conversation = Conversation(
            skills.repositories[WITH_SKILL],
            plan.query,
            cassette=cassettes / f"query-{plan.index}" / f"run-{plan.run_number}.json",
            max_turns=access.options.max_turns,
        )
        conversed = converse(access, conversation, skills.roots, stop_on_load=skills.name)
        return conversed.triggered, "" if conversed.error is None else str(conversed.error)

    def stopped_before(plan: TriggerPlan) -> tuple[bool, str]:
        return False, "interrupted"

    def broke(plan: TriggerPlan, error: Exception) -> tuple[bool, str]:
        return False, f"{type(error).__name__}: {error}"

    progress = Progress(request.progress, len(plans), f"trigger queries of {skills.name}")
    with eval_runtime(options) as runtime:
        outcomes, stopped = run_all(
            options,
            plans,
            one,
            (stopped_before, broke),
            lambda result: progress.done(result[0], 0),
            runtime=runtime,
        )
    results = []
    for index, query in enumerate(queries, 1):
        pairs = zip(plans, outcomes, strict=True)
        mine = [outcome for plan, outcome in pairs if plan.index == index]
        triggers = sum(1 for triggered, _ in mine if triggered)
        errors = [message for _, message in mine if message]
        rate = triggers / len(mine) if mine else 0.0
        meets = rate >= options.threshold if query.should_trigger else rate < options.threshold
        results.append(
            {
                "query": query.query,
                "should_trigger": query.should_trigger,
                "trigger_rate": round(rate, 4),
                "triggers": triggers,
                "runs": len(mine),
                "errors": len(errors),
                "error_messages": errors,
                "pass": meets and not errors,
            }
        )
    passed = sum(1 for result in results if result["pass"])
    document = {
        "skill_name": skills.name,
        "description": skills.description,
        "model": options.model,
        "threshold": options.threshold,
        "runs_per_query": options.runs,
        "runtime": runtime.name,
        "results": results,
        "summary": {"total": len(results), "passed": passed, "failed": len(results) - passed},
    }
    return TriggerOutcome(document, stopped)


def run_all(
    options: EvalOptions,
    plans: Sequence[Plan],
    work: Callable[[ModelAccess, Plan], Result],
    failures: tuple[Callable[[Plan], Result], Callable[[Plan, Exception], Result]],
    done: Callable[[Result], None],
    *,
    runtime: Runtime | None = None,
) -> tuple[list[Result], bool]:
    """``work`` for every plan, up to ``options.jobs`` at once, results in plan order.

    The model's commands run in ``runtime``; without one, in the one
    :func:`~.isolation.eval_runtime` opens for ``options`` (and closes at the end).

    ``failures`` makes the result of a plan that did not run (stopped before it) and of one
    whose work raised (a bug, recorded against that run rather than ending the others).

    Ctrl-C (KeyboardInterrupt) stops the eval: no new run starts, runs waiting to ask the
    upstream again stop waiting, the runs going on get :data:`STOP_GRACE` seconds to end
    (their next request is refused), and every run that did not finish is
    ``stopped_before(plan)``; the second value says whether that happened.
    """
    if runtime is None:
        with eval_runtime(options) as opened:
            return run_all(options, plans, work, failures, done, runtime=opened)
    stopped_before, crashed_with = failures
    _warm_up()
    pool = UpstreamPool(options.upstream, jobs=options.jobs, retry=options.retry)
    access = ModelAccess(options, pool, runtime)
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
            try:
                outcome: Any = work(access, plans[index])
            except Exception as error:  # a bug: this run's failure, not the eval's
                outcome = crashed_with(plans[index], error)
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
        results[index] if index in results else stopped_before(plan)
        for index, plan in enumerate(plans)
    ], stopped


def _warm_up() -> None:
    """Import the HTTP stack and start the loopback server in this thread: modules imported
    for the first time by several runs at once are seen half-initialised by some."""
    import httpx  # noqa: F401
    import openai  # noqa: F401

    from ..harness.in_process import in_process_http_client
    from ..harness.server import shared_server

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
        self.started = time.perf_counter()

    def run_done(self, result: RunResult) -> None:
        if result.error:
            self.errors += 1
        passing = not result.error and result.total > 0 and result.passed == result.total
        self.done(passing, result.tokens)

    def done(self, passing: bool, tokens: int) -> None:
        self.count += 1
        self.passing += passing
        self.tokens += tokens
        if self.stream is None:
            return
        errors = f", {self.errors} error(s)" if self.errors else ""
        print(
            f"[{self.count}/{self.total}] {self.what}: {self.passing} passing so far{errors},"
            f" {self.tokens} tokens, {time.perf_counter() - self.started:.1f} s",
            file=self.stream,
            flush=True,
        )


def _cassettes(options: EvalOptions, skills: Skills) -> Path:
    return skill_cassettes(options, skills.name, skills.directory)


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


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when inside it (the same on every checkout)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(Path(path).resolve())
