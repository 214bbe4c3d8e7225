"""What a mutant costs against one plain run of the same checks, and what stopping at the
first failing check saves.

The fixture skill ``order-total`` (tests/fixtures/mutation/) with its strong scenario suite is
copied into a temporary repository.  Measured in the same run, round robin:

- the *plain run*: every scenario that offers the skill, replayed once against the original,
  in this process (what ``pytest`` does for them);
- the *mutation run*: ``run_mutation`` on its 30 mutants, one at a time (``--jobs 1``) and
  two at a time: each mutant's copy, its forked process and its checks, up to the first
  check that fails.

    python bench/mutate.py [rounds]

Goal: the time per mutant (the median of the mutants' own times, one at a time) within 2x the
plain run (median against median).  Beside it: the wall time per mutant of both runs, and the
model requests (scripted turns) that stopping at the first failing check did not make, of
those every check of every mutant would have made.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_agent_skills.config.runtimes import RuntimeOptions
from pytest_agent_skills.harness.run_settings import RunSettings
from pytest_agent_skills.mutate.checks import ScenarioSuite, scenario_checks
from pytest_agent_skills.mutate.operators import mutants_of
from pytest_agent_skills.mutate.runner import KILLED, RunLimits, run_mutation
from pytest_agent_skills.skill import Skill

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mutation"
SKILL = "order-total"
GOAL = 2.0


def _project(root: Path) -> Path:
    shutil.copytree(FIXTURES / SKILL, root / SKILL)
    shutil.copytree(FIXTURES / "suites" / "strong", root / "suites" / "strong")
    return root / SKILL


def _suite(skill_dir: Path, work: Path) -> ScenarioSuite:
    checks = scenario_checks(skill_dir, skill_dir.parent, [])
    suite = ScenarioSuite(skill_dir, checks, RunSettings(), RuntimeOptions())
    suite.place(work)
    return suite


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory(prefix="bench-mutate-") as temporary:
        root = Path(temporary)
        skill_dir = _project(root / "project")
        mutants = mutants_of(Skill.load(skill_dir), seed=0, max_mutants=30)
        plain: list[float] = []
        per_mutant: list[float] = []
        survivors: list[float] = []
        walls: dict[int, list[float]] = {1: [], 2: []}
        saved = total = 0
        for number in range(rounds + 1):  # the first round warms up (imports): not counted
            work = root / f"plain-{number}"
            work.mkdir()
            suite = _suite(skill_dir, work)
            if number == 0:
                for index in range(len(suite.names)):
                    suite.run(index, skill_dir)
                continue
            started = time.perf_counter()
            for index in range(len(suite.names)):
                assert suite.run(index, skill_dir) is None
            plain.append(time.perf_counter() - started)
            turns = [len(check.scenario.script or ()) for check in suite.checks]
            for jobs in (1, 2):
                started = time.perf_counter()
                run = run_mutation(skill_dir, suite, mutants, RunLimits(jobs=jobs))
                walls[jobs].append((time.perf_counter() - started) / len(mutants))
                if jobs == 1:
                    per_mutant.append(statistics.median(run.mutant_seconds))
                    pairs = zip(run.mutant_seconds, run.verdicts, strict=True)
                    survivors.extend(s for s, verdict in pairs if verdict.status != KILLED)
            for verdict in run.verdicts:  # the requests the checks not run would have made
                total += sum(turns)
                if verdict.status == KILLED:
                    saved += sum(turns[verdict.checks_run :])
        load = os.getloadavg()[0]
        plain_ms, mutant_ms = statistics.median(plain) * 1000, statistics.median(per_mutant) * 1000
        ratio = mutant_ms / plain_ms
        print(
            f"mutation of {SKILL}: {len(mutants)} mutants, {len(turns)} scenario checks (strong"
            f" suite), {rounds} rounds round robin, load average {load:.2f}"
        )
        print(f"goal: time per mutant <= {GOAL:g}x one plain run of the same checks")
        print(
            f"  per mutant / plain run  x{ratio:.2f}  {'met' if ratio <= GOAL else 'not met'}"
            f"  ({mutant_ms:.1f} / {plain_ms:.1f} ms; minima x{min(per_mutant) / min(plain):.2f})"
        )
        print(f"  plain run  {plain_ms:.1f}ms  {min(plain) * 1000:.1f}ms")
        if survivors:  # every check run: the mutant's whole cost
            whole = statistics.median(survivors) * 1000
            print(f"  a surviving mutant  {whole:.1f}ms  x{whole / plain_ms:.2f} of the plain run")
        for jobs, figures in walls.items():
            wall = statistics.median(figures) * 1000
            print(
                f"  wall per mutant, --jobs {jobs}  {wall:.1f}ms  x{wall / plain_ms:.2f} of the"
                " plain run"
            )
        print(
            f"model requests saved by stopping at the first failing check: {saved} of {total}"
            f" ({100 * saved / total:.1f}%)"
        )


if __name__ == "__main__":
    main()
