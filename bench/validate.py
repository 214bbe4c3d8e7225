"""Benchmark: ``agent-skills validate`` as users run it, against skills-ref 0.1.1, whole processes.

    python bench/validate.py [--corpus DIR] [--sizes 3000] [--linear 1000 10000] [--runs 3]

Measured in this run, interleaved, best of --runs, every side a process of its own with its
start-up and imports included:

* ours given every ``SKILL.md`` as one argument each (what pre-commit passes) and given the one
  folder holding them (what CI runs): ``agent-skills validate ...`` as a subprocess, with its
  default ``--jobs auto`` (the skills shared out to one process per idle processor), and given the
  folder with ``--jobs 1`` (every skill in one process: the CPU time a busy machine pays);
* skills-ref's ``validate()`` called in one Python process over the same skill folders (found
  by a walk inside that process);
* the bare interpreter (``python -c pass``): the floor both pay.

Inputs: the public corpus (--corpus, default ../shared/corpus beside the checkout) and N
generated skills (--sizes; each with a doc and a script it links, every tenth one with a bad
name).  Prints wall times (and the CPU time of each process, which a busy machine disturbs
less), the ratios skills-ref / ours (goal: >= 10x on the generated skills both ways, >= 3x on
the corpus, where we also check every referenced file and skills-ref checks none), where our
time goes (interpreter, imports, discovery, parsing, checks, output), and the time per skill
above the start-up floor at each --linear size (goal: flat, i.e. linear in the skills).  The
load average is printed before and after: other work slows every side.

Bytecode is written and each command runs once before the timing, as on a user's machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: The corpus beside the checkout (``../shared/corpus``) or beside its parent (a worktree).
CORPUS_CANDIDATES = (REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus")

SKILL_TEMPLATE = """---
name: {name}
description: Summarises data set {index}. Use when the user asks about data set {index}.
license: Apache-2.0
metadata:
  author: bench
  version: "1.{index}"
---
# Data set {index}

Steps:

1. Read [the guide](docs/guide.md).
2. Run `python scripts/run.py --set {index}`.

Tools:
- get_weather
- search
"""

SKILLS_REF = """
import sys
from pathlib import Path
from skills_ref.validator import validate
root = Path(sys.argv[1])
folders = sorted({path.parent for path in root.rglob("SKILL.md")})
failed = sum(bool(validate(folder)) for folder in folders)
print(len(folders), failed)
"""


def generate(root: Path, count: int) -> list[Path]:
    """``count`` skill folders under ``root``; every tenth one has a bad name (Upper_Case)."""
    directories = []
    for index in range(count):
        name = f"skill-{index:05d}" if index % 10 else f"Skill_{index:05d}"
        directory = root / name
        (directory / "docs").mkdir(parents=True)
        (directory / "scripts").mkdir()
        (directory / "SKILL.md").write_text(SKILL_TEMPLATE.format(name=name, index=index))
        (directory / "docs" / "guide.md").write_text("# Guide\n")
        (directory / "scripts" / "run.py").write_text("print('ok')\n")
        directories.append(directory)
    return directories


def environment() -> dict[str, str]:
    """This environment, bytecode written (as an installed package has it), this checkout's
    package first, no SKILLS_* setting of the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return env


def ours(*arguments: str) -> list[str]:
    """The ``agent-skills`` command, as the console script runs it."""
    entry = "import sys; from pytest_agent_skills.cli import main; sys.exit(main())"
    return [sys.executable, "-c", entry, "validate", "--exit-zero", *arguments]


class Clock:
    """Runs commands, keeps the best wall and CPU time of each label."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = environment()
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.outputs: dict[str, str] = {}

    def run(self, label: str, command: list[str]) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            command, cwd=self.cwd, env=self.env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{label} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        self.wall[label] = min(self.wall.get(label, wall), wall)
        self.cpu[label] = min(self.cpu.get(label, cpu), cpu)
        self.outputs[label] = done.stdout


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min)"


def commands(root: Path, with_reference: bool) -> dict[str, list[str]]:
    skill_files = sorted(str(path) for path in root.rglob("SKILL.md"))
    variants = {
        "interpreter": [sys.executable, "-c", "pass"],
        "ours, paths": ours(*skill_files),
        "ours, folder": ours(str(root)),
        "ours, 1 job": ours("--jobs", "1", str(root)),
    }
    if with_reference:
        variants["skills-ref"] = [sys.executable, "-c", SKILLS_REF, str(root)]
    return variants


def measure(root: Path, runs: int, with_reference: bool) -> Clock:
    clock = Clock(root.parent)
    variants = commands(root, with_reference)
    for label, command in variants.items():  # warm-up: bytecode, file system caches
        clock.run(label, command)
    clock.wall.clear()
    clock.cpu.clear()
    for _ in range(runs):
        for label, command in variants.items():
            clock.run(label, command)
    return clock


def compare(label: str, root: Path, runs: int, with_reference: bool, goal: float) -> list[str]:
    clock = measure(root, runs, with_reference)
    skills = sum(1 for _ in root.rglob("SKILL.md"))
    print(f"\n{label}: {skills} skills, best of {runs} (wall ms / CPU ms)")
    for name in clock.wall:
        print(f"  {name:<16} {clock.wall[name] * 1e3:9.1f} {clock.cpu[name] * 1e3:9.1f}")
    lines = []
    if with_reference:
        floor = clock.wall["skills-ref"]
        for side in ("ours, paths", "ours, folder", "ours, 1 job"):
            ratio = floor / clock.wall[side]
            cpu_ratio = clock.cpu["skills-ref"] / clock.cpu[side]
            verdict = "holds" if ratio >= goal else "below the goal"
            lines.append(
                f"{label}, {side}: skills-ref {floor * 1e3:.1f} ms / ours"
                f" {clock.wall[side] * 1e3:.1f} ms = {ratio:.1f}x (CPU {cpu_ratio:.1f}x;"
                f" goal >= {goal:g}x: {verdict})"
            )
        print(f"  skills-ref found {clock.outputs['skills-ref'].split()[0]} skill folders")
    return lines


# --- where our time goes -------------------------------------------------------------------------


def _breakdown_child(root: Path) -> None:
    """In a process of its own: the stages of one ``validate ROOT`` (imports as the CLI loads
    them), printed as JSON: the CPU time of each, in ms (a busy machine disturbs the wall
    time of short stages far more)."""
    started = time.process_time()
    from pytest_agent_skills.config.scopes import Scopes
    from pytest_agent_skills.listings import FolderListings
    from pytest_agent_skills.rules import (
        CHECKS,
        check_findings,
        skill_dirs,
        to_text,
        validate_paths,
    )
    from pytest_agent_skills.skill import Skill

    stages: dict[str, float] = {"imports": time.process_time() - started}

    def stage(name: str, work: Callable[[], object]) -> object:
        gc.collect()
        start = time.process_time()
        result = work()
        stages[name] = time.process_time() - start
        return result

    listings = FolderListings()
    scopes = Scopes({})
    stage("configuration", lambda: scopes.for_path(root))
    folders = stage("discovery", lambda: skill_dirs(root, listings))
    assert isinstance(folders, list)
    # As validate_paths goes: every SKILL.md read then parsed, each check over every skill.
    skills = stage("parsing", lambda: Skill.load_all(folders, listings))
    assert isinstance(skills, list)
    stage(
        "checks",
        lambda: [check_findings(skill, check) for check in CHECKS for skill in skills],
    )
    reports = validate_paths([root])
    stage("output (text)", lambda: to_text(reports))
    print(json.dumps({name: seconds * 1e3 for name, seconds in stages.items()}))


def breakdown(root: Path, interpreter_cpu: float) -> None:
    env = environment()
    command = [sys.executable, __file__, "--breakdown-child", str(root)]
    best: dict[str, float] = {}
    for _ in range(3):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        for name, ms in json.loads(done.stdout).items():
            best[name] = min(best.get(name, ms), ms)
    print(f"  where ours goes on {root.name} (one folder; best of 3 processes, CPU ms):")
    print(f"    {'interpreter start':<20} {interpreter_cpu * 1e3:8.1f}")
    for name, ms in best.items():
        print(f"    {name:<20} {ms:8.1f}")


# --- linear in the skills ------------------------------------------------------------------------


def linearity(sizes: list[int], runs: int) -> None:
    print(
        f"\nlinear in the skills: ours, ms per 1,000 skills above ours on one skill (start-up and"
        f" imports), best of {runs}"
    )
    per_skill: dict[str, list[float]] = {"ours, paths": [], "ours, folder": []}
    for size in sizes:
        workdir = Path(tempfile.mkdtemp(prefix="bench-validate-"))
        try:
            root = workdir / "skills"
            generate(root, size)
            clock = measure(root, runs, with_reference=False)
            single = Clock(workdir)
            for _ in range(runs + 1):
                single.run("one skill", ours(str(root / "skill-00001")))
            floor = single.wall["one skill"]
            cells = []
            for side, values in per_skill.items():
                values.append(max(clock.wall[side] - floor, 1e-9) / size * 1e6)
                cells.append(f"{side} {values[-1]:7.1f}")
            print(f"  {size:>6} skills: " + "  ".join(cells), flush=True)
        finally:
            shutil.rmtree(workdir)
    for side, values in per_skill.items():
        if len(values) > 1:
            print(
                f"  {side}: per skill at {sizes[-1]:,} / at {sizes[0]:,} ="
                f" {values[-1] / values[0]:.2f} (goal: about 1, linear)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--sizes", type=int, nargs="*", default=[3000])
    parser.add_argument("--linear", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each command")
    parser.add_argument("--breakdown-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.breakdown_child:
        _breakdown_child(args.breakdown_child)
        return
    try:
        import skills_ref  # noqa: F401
    except ImportError:
        with_reference = False
        print("skills-ref is not installed (pip install -e '.[test]'): no ratio")
    else:
        with_reference = True
    print(f"cpus: {os.cpu_count()}, {load_average()} (other work slows every side)")
    ratios: list[str] = []
    corpus = args.corpus or next((c for c in CORPUS_CANDIDATES if c.is_dir()), None)
    if corpus is not None and corpus.is_dir():
        clock_lines = compare("corpus", corpus, args.runs, with_reference, goal=3)
        ratios += clock_lines
        breakdown(corpus, interpreter_cpu())
    else:
        print("corpus not found (--corpus DIR): skipped")
    for size in args.sizes:
        workdir = Path(tempfile.mkdtemp(prefix="bench-validate-"))
        try:
            root = workdir / "skills"
            generate(root, size)
            ratios += compare(f"generated {size:,}", root, args.runs, with_reference, goal=10)
            breakdown(root, interpreter_cpu())
        finally:
            shutil.rmtree(workdir)
    if ratios:
        print("\nratio = skills-ref wall time / ours (whole processes, best of each)")
        for line in ratios:
            print(line)
    if args.linear:
        linearity(args.linear, args.runs)
    print(f"\nafter: {load_average()}")


def interpreter_cpu() -> float:
    """The CPU time of the bare interpreter's start and end, best of 3."""
    clock = Clock(REPO)
    for _ in range(3):
        clock.run("interpreter", [sys.executable, "-c", "pass"])
    return clock.cpu["interpreter"]


if __name__ == "__main__":
    main()
