"""pytest-xdist over many skills: `pytest -n 2` against a serial run of the same 1,000 skills.

    python bench/xdist.py [--skills 1000] [--runs 3]

Each skill is a valid SKILL.md (7 check items), one in fifty with an error and one in a
hundred sharing another's name, in a dot-folder root listed in ``skills_roots`` (as a skill
repository has it).  Serial and ``-n 2`` runs alternate (each writes JUnit XML); printed: the
median and fastest wall time of each, the ratio ``-n 2`` / serial (goal: at most 1.0 on a
2-core machine), and whether both runs gave identical results (every item's outcome).  A floor
measured in the same run: as many plain Python test functions, serial and ``-n 2``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

SKILL = """---
name: {name}
description: Summarises report number {index}. Use when the user asks about report {index}.
---
# Report {index}

Run `python3 scripts/report.py` and read [the guide](docs/guide.md).
"""


def make_skills(root: Path, count: int) -> None:
    skills = root / ".claude" / "skills"
    for index in range(count):
        folder = skills / f"skill-{index:04d}"
        (folder / "docs").mkdir(parents=True)
        (folder / "scripts").mkdir()
        (folder / "docs" / "guide.md").write_text("# Guide\n")
        (folder / "scripts" / "report.py").write_text("print('report')\n")
        name = f"skill-{index:04d}"
        if index % 50 == 7:
            name = f"Skill_{index}"  # name-charset and name-directory errors
        elif index % 100 == 3:
            name = f"skill-{index - 1:04d}"  # a duplicate name (and name-directory)
        (folder / "SKILL.md").write_text(SKILL.format(name=name, index=index))
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nskills_roots = [".claude/skills"]\n'
    )


def make_plain_tests(root: Path, count: int) -> None:
    lines = [f"def test_{index}():\n    assert {index} >= 0\n" for index in range(count)]
    (root / "test_plain.py").write_text("\n".join(lines))


def run(folder: Path, extra: list[str]) -> tuple[float, list[str], int]:
    """Wall time, every item's outcome (from the JUnit XML report) and the exit status."""
    report = folder / "report.xml"
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
        *extra,
    ]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment.pop("PYTEST_ADDOPTS", None)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environment)
    elapsed = time.perf_counter() - start
    outcomes = []
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = next((child.tag for child in case if child.tag != "system-out"), "passed")
        outcomes.append(f"{case.get('classname')}::{case.get('name')} {outcome}")
    return elapsed, sorted(outcomes), done.returncode


def compare(label: str, folder: Path, runs: int) -> None:
    times: dict[str, list[float]] = {"serial": [], "-n 2": []}
    results: dict[str, tuple[list[str], int]] = {}
    for extra in ([], ["-n", "2"]):  # warm-up: bytecode caches
        run(folder, extra)
    for _ in range(runs):
        for name, extra in (("serial", []), ("-n 2", ["-n", "2"])):
            elapsed, outcomes, status = run(folder, extra)
            times[name].append(elapsed)
            results[name] = (outcomes, status)
    serial, parallel = (statistics.median(times[name]) for name in ("serial", "-n 2"))
    identical = results["serial"] == results["-n 2"]
    print(
        f"{label}: serial {serial:.2f} s (fastest {min(times['serial']):.2f}),"
        f" -n 2 {parallel:.2f} s (fastest {min(times['-n 2']):.2f});"
        f" ratio -n 2 / serial {parallel / serial:.2f};"
        f" {len(results['serial'][0])} outcomes, identical: {identical}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        skills, plain = Path(temp) / "skills-repo", Path(temp) / "plain"
        skills.mkdir()
        plain.mkdir()
        make_skills(skills, options.skills)
        make_plain_tests(plain, options.skills * 7)
        print(f"{options.skills} skills ({options.skills * 7} items), {options.runs} runs each:")
        compare("skills", skills, options.runs)
        compare(f"floor: {options.skills * 7} plain tests", plain, options.runs)


if __name__ == "__main__":
    main()
