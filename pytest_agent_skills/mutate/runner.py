"""A mutation run: the checks against the original skill, then against each mutant in a
temporary copy of the skill (:func:`run_mutation`).  Only the temporary folder is written;
it is removed when the run ends, however it ends (Ctrl-C included)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..skill import Skill
from .checks import CheckError, Failure, Suite
from .forks import Failed, Finished, run_forked
from .mutant import Mutant

KILLED, SURVIVED, ERROR, TIMEOUT = "killed", "survived", "error", "timeout"


@dataclass(frozen=True)
class Verdict:
    """What the checks said of one mutant: ``killed_by`` names the first check that failed
    on it (``detail`` says how); an ``error`` or ``timeout`` says what went wrong."""

    status: str
    killed_by: str | None = None
    detail: str | None = None
    #: Checks run on this mutant (a run stops at the first that fails).
    checks_run: int = 0
    #: Model requests its checks made, and those stopping early did not make.
    requests: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class MutationRun:
    """The original's check results and each mutant's verdict, with their times."""

    #: Per check: None when it passes on the original, else how it fails.
    original: tuple[Failure | None, ...]
    original_seconds: float
    mutants: tuple[Mutant, ...]
    verdicts: tuple[Verdict, ...]
    mutant_seconds: tuple[float, ...]

    @property
    def passing(self) -> list[int]:
        return [index for index, failure in enumerate(self.original) if failure is None]

    @property
    def requests(self) -> tuple[int, int]:
        """Model requests the mutants' checks made, and those stopping early saved."""
        return (
            sum(verdict.requests[0] for verdict in self.verdicts),
            sum(verdict.requests[1] for verdict in self.verdicts),
        )


@dataclass(frozen=True)
class RunLimits:
    """How a run is spread and bounded: ``jobs`` mutants at once, each given ``timeout``
    seconds (None: ten times the original's time, and 10 s more)."""

    jobs: int = 1
    timeout: float | None = None
    #: False: None means no deadline at all (model runs take what the endpoint takes).
    auto_timeout: bool = True


class OriginalFailedError(Exception):
    """The original's checks could not run at all."""


def run_mutation(
    skill_dir: Path,
    suite: Suite,
    mutants: list[Mutant],
    limits: RunLimits,
    progress: Callable[[str], None] | None = None,
) -> MutationRun:
    """Run ``suite`` on the original in ``skill_dir``, then on each mutant (only the checks
    that pass on the original, stopping at the first that fails)."""
    baseline_problems = _errors(Skill.load(skill_dir))
    with tempfile.TemporaryDirectory(prefix="agent-skills-mutate-") as work:
        suite.place(Path(work))
        started = time.monotonic()
        [first] = run_forked([lambda: _all_checks(suite, skill_dir)], 1, limits.timeout)
        if isinstance(first, Failed):
            raise OriginalFailedError(f"the checks could not run on the original: {first.message}")
        original: tuple[Failure | None, ...] = first.value
        original_seconds = time.monotonic() - started
        passing = [index for index, failure in enumerate(original) if failure is None]
        timeout = limits.timeout
        if timeout is None and limits.auto_timeout:
            timeout = 10 * original_seconds + 10.0

        def job(mutant: Mutant) -> Callable[[], Verdict]:
            return lambda: _mutant_verdict(
                _MutantRun(skill_dir, Path(work), mutant, baseline_problems), suite, passing
            )

        outcomes = run_forked([job(mutant) for mutant in mutants], limits.jobs, timeout)
    verdicts = tuple(_verdict(outcome) for outcome in outcomes)
    if progress is not None:
        progress(f"{len(mutants)} mutants checked against {len(passing)} check(s)")
    return MutationRun(
        original, original_seconds, tuple(mutants), verdicts,
        tuple(outcome.seconds for outcome in outcomes),
    )


def _verdict(outcome: Finished[Verdict] | Failed) -> Verdict:
    if isinstance(outcome, Finished):
        return outcome.value
    return Verdict(TIMEOUT if outcome.timed_out else ERROR, detail=outcome.message)


def _all_checks(suite: Suite, folder: Path) -> tuple[Failure | None, ...]:
    return tuple(suite.run(index, folder) for index in range(len(suite.names)))


@dataclass(frozen=True)
class _MutantRun:
    skill_dir: Path
    work: Path
    mutant: Mutant
    baseline_problems: int

    def copy(self) -> Path:
        """The skill copied under the work folder, the mutant's change made in the copy."""
        target = self.work / self.mutant.id / self.skill_dir.name
        shutil.copytree(self.skill_dir, target, symlinks=True)
        changed = target / self.mutant.file
        if self.mutant.text is None:
            changed.unlink()
        else:
            changed.write_bytes(self.mutant.text.encode("utf-8"))
        return target


def _mutant_verdict(run: _MutantRun, suite: Suite, passing: list[int]) -> Verdict:
    folder = run.copy()
    try:
        skill = Skill.load(folder)
        if _errors(skill) > run.baseline_problems:
            first = next(finding for finding in skill.problems if finding.is_error)
            why = f"the skill no longer reads: [{first.rule}] {first.message}"
            return Verdict(ERROR, detail=why)
        for count, index in enumerate(passing, start=1):
            try:
                failure = suite.run(index, folder)
            except CheckError as error:
                return Verdict(ERROR, detail=str(error), requests=suite.spent())
            if failure is not None:
                return Verdict(KILLED, failure.check, failure.why, count, suite.spent())
        return Verdict(SURVIVED, checks_run=len(passing), requests=suite.spent())
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def _errors(skill: Skill) -> int:
    return sum(1 for finding in skill.problems if finding.is_error)
