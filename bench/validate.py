"""Benchmark: validating real and generated skills, ours vs skills-ref, and pytest collection cost.

Prints, for the public corpus in ../shared/corpus (144 skills with long bodies; --corpus) and
for N = 3,000 generated skills (--sizes):
- the time our validator takes (load + every rule, references included) and the time
  skills-ref 0.1.1's ``validate()`` takes over the same skill folders, each in its own process
  (one process per validator and set, alternating, best of --processes): ``warm`` is the best of
  the rounds inside a process, ``cold`` its first round (lazy imports included); the ratio
  skills-ref / ours (goal >= 10x on both sets). Both processes get the same folder list (one
  walk before the timing), import their validator before the timing and keep nothing from
  one round to the next (each validate_paths call lists and reads the folders again);
- the same ratio on equal work: our checks without the references check (which reads every
  body for links and paths, resolves them and reads the Markdown files they name: skills-ref
  checks no reference), a secondary figure beside the goal's;
- microseconds per skill for ours at each N (goal: flat as N grows);
- the cost per collected skill under ``pytest --collect-only`` against the pytest floor, the
  same number of trivial test files (goal <= 2x); the start-up time of pytest on an empty
  folder is measured in the same run and subtracted from both.

The machine's load average is printed before and after: other work slows both validators.

Run: python bench/validate.py [--corpus DIR] [--sizes 3000] [--collect-sizes 1000 5000]
[--breakdown] (--breakdown also prints where our time goes on the corpus, stage by stage)
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
ROUNDS = 5

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


def generate(root: Path, count: int) -> list[Path]:
    """``count`` skill folders; every tenth one has a bad name (Upper_Case)."""
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


def _child(validator: str, root: Path) -> None:
    """In a process of its own: time ``validator`` over every skill under ``root``; print JSON."""
    from pytest_agent_skills.repository import find_skill_dirs

    directories = sorted(find_skill_dirs(root))
    if validator == "ours":
        from pytest_agent_skills.rules import validate_paths

        def run() -> int:
            return sum(not report.ok for report in validate_paths(directories))
    elif validator == "ours-without-references":
        from pytest_agent_skills.listings import FolderListings
        from pytest_agent_skills.rules import CHECKS, check_findings, skill_dirs
        from pytest_agent_skills.skill import Skill

        checks = [check for check in CHECKS if check != "references"]

        def run() -> int:
            listings, failed = FolderListings(), 0
            for folder in (found for path in directories for found in skill_dirs(path, listings)):
                skill = Skill.load(folder, listings)
                findings = [kept for check in checks for kept in check_findings(skill, check)[0]]
                failed += any(finding.is_error for finding in findings)
            return failed
    else:
        from skills_ref.validator import validate

        def run() -> int:
            return sum(bool(validate(directory)) for directory in directories)

    times, failed = [], 0
    for _ in range(ROUNDS):
        gc.collect()
        start = time.perf_counter()
        failed = run()
        times.append(time.perf_counter() - start)
    print(json.dumps({"cold": times[0], "warm": min(times[1:]), "failed": failed,
                      "skills": len(directories)}))


def breakdown(root: Path) -> None:
    """Where our validator's time goes over ``root``, in this process: each stage of a run
    (walk, load, each check over every skill), best of ``2 * ROUNDS`` runs.  A diagnostic: the
    ratios above are the figures."""
    from pytest_agent_skills.listings import FolderListings
    from pytest_agent_skills.repository import find_skill_dirs
    from pytest_agent_skills.rules import CHECKS, check_findings, skill_dirs
    from pytest_agent_skills.skill import Skill

    directories = sorted(find_skill_dirs(root))
    best: dict[str, float] = {}
    for _ in range(2 * ROUNDS):
        gc.collect()
        times = {}
        start = time.perf_counter()
        listings = FolderListings()
        found = [folder for path in directories for folder in skill_dirs(path, listings)]
        times["walk (find the skill folders)"] = time.perf_counter() - start
        start = time.perf_counter()
        skills = [Skill.load(folder, listings) for folder in found]
        times["load (read and parse SKILL.md)"] = time.perf_counter() - start
        for check in CHECKS:
            start = time.perf_counter()
            for skill in skills:
                check_findings(skill, check)
            times[f"check {check}"] = time.perf_counter() - start
        for stage, elapsed in times.items():
            best[stage] = min(best.get(stage, elapsed), elapsed)
    print(f"\nwhere our time goes on {root.name} ({len(directories)} skills, one process, best of"
          f" {2 * ROUNDS} runs per stage; stages sum to a little less than a run):")
    for stage, elapsed in best.items():
        print(f"  {stage:<34} {elapsed * 1e3:7.2f} ms")


def measure(validator: str, root: Path) -> dict:
    command = [sys.executable, __file__, "--child", validator, str(root)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{validator} failed on {root}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def compare(
    label: str, root: Path, processes: int, have_reference: bool, ratios: list[str]
) -> float:
    """One line: ours and skills-ref over ``root``, alternating processes, best of each."""
    ours, theirs = [], []
    equal_work = []
    for _ in range(processes):
        ours.append(measure("ours", root))
        if have_reference:
            theirs.append(measure("skills-ref", root))
            equal_work.append(measure("ours-without-references", root))
    best = min(ours, key=lambda run: run["warm"])
    cold = min(run["cold"] for run in ours)
    skills = best["skills"]
    line = (
        f"{label:<22} {skills:>6} {best['warm'] * 1e3:>9.1f} {cold * 1e3:>9.1f}"
        f" {best['warm'] / skills * 1e6:>9.1f}"
    )
    if have_reference:
        if any(run["skills"] != skills for run in theirs):
            raise RuntimeError(f"{label}: skills-ref did not validate the same {skills} folders")
        floor = min(run["warm"] for run in theirs)
        floor_cold = min(run["cold"] for run in theirs)
        line += (
            f" {floor * 1e3:>13.1f} {floor_cold * 1e3:>9.1f} {floor / best['warm']:>6.1f}x"
            f" {floor_cold / cold:>6.1f}x"
        )
        ratios.append(
            f"{label}: ours {best['warm'] * 1e3:.1f} ms, skills-ref {floor * 1e3:.1f} ms:"
            f" {floor / best['warm']:.1f}x warm, {floor_cold / cold:.1f}x cold (goal >= 10x)"
        )
        same = min(run["warm"] for run in equal_work)
        ratios.append(
            f"{label}, the same work as skills-ref (our checks without the references check,"
            f" which skills-ref has no counterpart of): ours {same * 1e3:.1f} ms:"
            f" {floor / same:.1f}x warm"
        )
    print(line, flush=True)
    return best["warm"] / skills


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not every system has one
        return "load average unknown"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min)"


def pytest_collect(folder: Path, *extra: str) -> float:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
        *extra,
    ]
    command += ["-p", "no:hypothesispytest", "-p", "no:benchmark", "--rootdir", str(folder)]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, str(folder)], cwd=folder, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 5):
        output = done.stdout[-2000:] + done.stderr[-2000:]
        raise RuntimeError(f"pytest failed in {folder}:\n{output}")
    return elapsed


def trivial_tests(root: Path, count: int) -> None:
    for index in range(count):
        (root / f"test_{index:05d}.py").write_text("def test_ok():\n    pass\n")


def best_of(runs: int, function, *args) -> float:
    return min(function(*args) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--sizes", type=int, nargs="*", default=[3000])
    parser.add_argument("--processes", type=int, default=3, help="processes per validator")
    parser.add_argument("--collect-sizes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument(
        "--breakdown", action="store_true", help="also print where our time goes on the corpus"
    )
    parser.add_argument("--child", nargs=2, metavar=("VALIDATOR", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    have_reference = importlib.util.find_spec("skills_ref") is not None
    if not have_reference:
        print("skills-ref is not installed (pip install -e '.[test]'): no ratio")

    print(f"cpus: {os.cpu_count()}, {load_average()} (other work slows both validators)")
    print(f"validation, one process per validator and set, best of {args.processes} processes;")
    print(f"in each process {ROUNDS} rounds over the same folders: warm = best round, cold = first")
    print(
        f"{'set':<22} {'skills':>6} {'ours ms':>9} {'cold ms':>9} {'us/skill':>9}"
        f" {'skills-ref ms':>13} {'cold ms':>9} {'ratio':>7} {'cold':>7}"
    )
    ratios: list[str] = []
    if args.corpus.is_dir():
        label = "corpus" if args.corpus.name == "corpus" else f"corpus {args.corpus.name}"
        compare(label, args.corpus, args.processes, have_reference, ratios)
    else:
        print(f"corpus not found at {args.corpus}: skipped (--corpus DIR)")
    per_skill = []
    for size in args.sizes:
        workdir = Path(tempfile.mkdtemp(prefix="bench-validate-"))
        try:
            generate(workdir, size)
            label = f"generated {size:,}"
            per_skill.append(compare(label, workdir, args.processes, have_reference, ratios))
        finally:
            shutil.rmtree(workdir)
    if len(per_skill) > 1:
        print(
            "ours, time per skill at the largest N / at the smallest N:"
            f" {per_skill[-1] / per_skill[0]:.2f}"
        )
    print("ratio = skills-ref ms / ours ms (warm rounds; 'cold': first rounds, lazy imports in)")
    for line in ratios:
        print(line)
    print(f"after validation: {load_average()}")
    if args.breakdown and args.corpus.is_dir():
        breakdown(args.corpus)

    if args.collect_sizes:
        print("\npytest --collect-only: ms per collected file above pytest's start-up (best of 3)")
        print(
            f"{'N':>6} {'trivial':>8} {'SKILL.md':>9} {'ratio':>6} {'+docs,scripts':>14}"
            f" {'ratio':>6} {'walk only':>10} {'plugin':>7} {'ratio':>6}"
        )
        for size in args.collect_sizes:
            collect_row(size)
        print("trivial: N test files (1 test each); SKILL.md: N skill folders holding only")
        print("SKILL.md; +docs,scripts: N skill folders with docs/guide.md and scripts/run.py;")
        print("walk only: that tree with --skills-validate=false (pytest's own directory walk);")
        print("plugin: the difference, our share. Each skill is collected as 7 check items.")


def collect_row(size: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-collect-"))
    try:
        folders = {name: workdir / name for name in ("empty", "trivial", "flat", "full")}
        for folder in folders.values():
            folder.mkdir()
        trivial_tests(folders["trivial"], size)
        generate(folders["full"], size)
        for index in range(size):
            skill = folders["flat"] / f"skill-{index:05d}"
            skill.mkdir()
            text = SKILL_TEMPLATE.format(name=skill.name, index=index)
            (skill / "SKILL.md").write_text(text)
        startup = best_of(3, pytest_collect, folders["empty"])

        def per_file(folder: Path, *extra: str) -> float:
            return (best_of(3, pytest_collect, folder, *extra) - startup) / size * 1e3

        trivial = per_file(folders["trivial"])
        flat = per_file(folders["flat"])
        full = per_file(folders["full"])
        walk = per_file(folders["full"], "--skills-validate=false")
        print(
            f"{size:>6} {trivial:>8.3f} {flat:>9.3f} {flat / trivial:>5.2f}x {full:>14.3f}"
            f" {full / trivial:>5.2f}x {walk:>10.3f} {full - walk:>7.3f}"
            f" {(full - walk) / trivial:>5.2f}x",
            flush=True,
        )
    finally:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
