"""Benchmark: validating generated skills, ours vs skills-ref, and pytest collection cost.

Prints, for N = 1,000 / 5,000 / 10,000 generated skills (change with --sizes):
- skills per second for our validator (load + every rule, references included) and for
  skills-ref 0.1.1's ``validate()``, both given the same skill folders, and the ratio (goal
  >= 10x); also ours when it discovers the folders under the root itself ('found');
- microseconds per skill for ours at each N (goal: flat as N grows);
- the cost per collected skill under ``pytest --collect-only`` against the pytest floor, the
  same number of trivial test files (goal <= 2x); the start-up time of pytest on an empty
  folder is measured in the same run and subtracted from both.

Run: python bench/validate.py [--sizes 1000 5000 10000] [--collect-sizes 1000 5000]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_agent_skills.rules import validate_paths

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


def timed(function, *args):
    gc.collect()
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def ours(paths: list[Path]) -> int:
    reports = validate_paths(paths)
    return sum(not report.ok for report in reports)


def reference(directories: list[Path]) -> int:
    from skills_ref.validator import validate

    return sum(bool(validate(directory)) for directory in directories)


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
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--collect-sizes", type=int, nargs="+", default=[1000, 5000])
    args = parser.parse_args()
    have_reference = importlib.util.find_spec("skills_ref") is not None
    if not have_reference:
        print("skills-ref is not installed (pip install -e '.[test]'): no ratio")

    print("validation: skills/s (load + all rules), best of 3 interleaved rounds; both validators")
    print("get the same list of skill folders; 'found' is ours discovering them under the root")
    header = (
        f"{'N':>7} {'ours/s':>8} {'us/skill':>9} {'found/s':>8} {'skills-ref/s':>13} {'ratio':>6}"
    )
    print(header)
    per_skill = []
    for size in args.sizes:
        workdir = Path(tempfile.mkdtemp(prefix="bench-validate-"))
        try:
            directories = generate(workdir, size)
            ours(directories)  # warm the file cache for both validators
            # Interleaved rounds, best of each: the machine's load changes both alike.
            ours_runs, found_runs, reference_runs = [], [], []
            for _ in range(3):
                ours_runs.append(timed(ours, directories))
                found_runs.append(timed(ours, [workdir]))
                if have_reference:
                    reference_runs.append(timed(reference, directories))
            ours_time, ours_failed = min(ours_runs)
            found_time, found_failed = min(found_runs)
            assert ours_failed == found_failed == len(range(0, size, 10)), ours_failed
            line = (
                f"{size:>7} {size / ours_time:>8.0f} {ours_time / size * 1e6:>9.1f}"
                f" {size / found_time:>8.0f}"
            )
            per_skill.append(ours_time / size)
            if have_reference:
                ref_time, ref_failed = min(reference_runs)
                assert ref_failed == ours_failed, (ref_failed, ours_failed)
                line += f" {size / ref_time:>13.0f} {ref_time / ours_time:>5.1f}x"
            print(line, flush=True)
        finally:
            shutil.rmtree(workdir)
    print(
        "ours, time per skill at the largest N / at the smallest N:"
        f" {per_skill[-1] / per_skill[0]:.2f}"
    )

    print("\npytest --collect-only: ms per collected file above pytest's start-up (best of 3)")
    print(
        f"{'N':>6} {'trivial':>8} {'SKILL.md':>9} {'ratio':>6} {'+docs,scripts':>14} {'ratio':>6}"
        f" {'walk only':>10} {'plugin':>7} {'ratio':>6}"
    )
    for size in args.collect_sizes:
        collect_row(size)
    print("trivial: N test files (1 test each); SKILL.md: N skill folders holding only SKILL.md;")
    print("+docs,scripts: N skill folders with docs/guide.md and scripts/run.py; walk only: that")
    print(
        "tree with --skills-validate=false (pytest's own directory walk); plugin: the difference,"
    )
    print("our share. Each skill is collected as 7 check items.")
    print(f"cpus: {os.cpu_count()}")


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
