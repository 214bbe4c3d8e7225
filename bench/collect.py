"""A big skill repository under pytest: default `pytest`, `pytest --tb=no` and the CLI.

    python bench/collect.py [--skills 3000] [--double] [--runs 3] [--failing 0.3]
                            [--items skill|check] [--whole-walk]

Generates a repository of N skills under ``skills/`` (``testpaths = ["skills"]``) of which
about 30% fail several checks at once (an unknown field, a name unlike the folder, a
description over the limit, a link to a missing doc), the rest valid; then times, as whole
processes run from the repository's folder, alternating, --runs rounds (the median wall time):

- ``pytest`` as a user runs it (default options: the failure report of every failing skill;
  standard output read through a pipe, as a CI log takes it);
- ``pytest --tb=no`` (no failure report: the floor of collecting and running the items);
- ``agent-skills validate skills`` (the CLI over the same skills).

``--items check`` runs pytest with the per-check view (``-o skills_items=check``: an item per
check, seven per skill) instead of the default one item per skill.  ``--whole-walk`` also times
default pytest with ``-o skills_walk_skill_folders=true`` (pytest's walk of every file and folder
of the skill folders, which by default it enters only where something can be collected) and
prints it over default pytest: what that setting costs.

Printed: the figures (wall time; CPU time of the process and its children beside it, which a
busy machine inflates less), the ratios default / --tb=no (goal <= 2) and default / CLI (goal
<= 10), and with --double the same at 2N skills (2x the failures) with each command's time at
2N over its time at N (goal <= 2: linear).  Every run's exit status and its count of failed
skills is checked against what was generated, so a fast wrong run is not a figure.  The load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VALID = """---
name: {name}
description: Summarises ledger number {index}. Use when the user asks about ledger {index}.
---
# Ledger {index}

Run `python3 scripts/summarise.py` and read [the guide](references/guide.md).
"""
#: Fails four checks: fields (an unknown field), name (unlike its folder), description (over
#: 1,024 characters), references (a missing doc).
FAILING = """---
name: Ledger_{index}
description: {long}
owner: finance-team
---
# Ledger {index}

Run `python3 scripts/summarise.py` and read [the rules](references/rules-{index}.md).
"""
FAILING_CHECKS = 4


def make_repository(root: Path, count: int, failing: float) -> int:
    """``count`` skills under ``root/skills``; returns how many fail."""
    step = max(1, round(1 / failing)) if failing > 0 else 0
    failed = 0
    long = "Summarises ledgers and reconciles them line by line. " * 24
    for index in range(count):
        name = f"ledger-{index:05d}"
        folder = root / "skills" / name
        (folder / "references").mkdir(parents=True)
        (folder / "scripts").mkdir()
        (folder / "references" / "guide.md").write_text("# Guide\n")
        (folder / "scripts" / "summarise.py").write_text("print('summary')\n")
        if step and index % step == 0:
            failed += 1
            text = FAILING.format(index=index, long=long.strip())
        else:
            text = VALID.format(name=name, index=index)
        (folder / "SKILL.md").write_text(text)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["skills"]\n')
    return failed


def environment() -> dict[str, str]:
    unset = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_XDIST_AUTO_NUM_WORKERS")
    return {key: value for key, value in os.environ.items() if key not in unset}


WHOLE_WALK = "pytest, whole walk"


def commands(items: str, whole_walk: bool = False) -> dict[str, list[str]]:
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    pytest += ["-o", f"skills_items={items}"]
    chosen = {
        "pytest": pytest,
        "pytest --tb=no": [*pytest, "--tb=no"],
        "agent-skills validate": [
            sys.executable, "-m", "pytest_agent_skills.cli", "validate", "skills"
        ],
    }
    if whole_walk:
        chosen[WHOLE_WALK] = [*pytest, "-o", "skills_walk_skill_folders=true"]
    return chosen


def run(command: list[str], folder: Path, skills: int, failed: int) -> tuple[float, float]:
    """The wall and CPU time of one run of ``command`` in ``folder``, its result checked."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environment())
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    name = command[2]  # after '-m': pytest or the CLI's module
    output = done.stdout
    if name == "pytest":
        found = re.search(r"(\d+) failed", output.splitlines()[-1] if output else "")
        count = int(found.group(1)) if found else 0
        collected = re.search(r"^collected (\d+) items", output, re.MULTILINE)
        per_check = collected is not None and int(collected.group(1)) > skills
        # One item per skill, or (the per-check view) one per check: four fail per skill.
        expected = failed * FAILING_CHECKS if per_check else failed
        ok = done.returncode == (1 if failed else 0) and count == expected
    else:
        found = re.search(r"(\d+) skill\(s\) failed", output)
        count = int(found.group(1)) if found else 0
        ok = done.returncode == (1 if failed else 0) and count == failed
    if not ok:
        raise SystemExit(
            f"{' '.join(command)} in {folder}: exit status {done.returncode}, {count} failures"
            f" reported for {failed} failing skills\n--- stdout (end)\n{output[-3000:]}"
            f"\n--- stderr\n{done.stderr[-3000:]}"
        )
    return elapsed, cpu


def measure(
    count: int, failing: float, runs: int, chosen: dict[str, list[str]]
) -> tuple[dict[str, tuple[float, float]], int]:
    """(median wall time, median CPU time) of each command, and the number of failing skills."""
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        failed = make_repository(folder, count, failing)
        for command in chosen.values():  # warm-up: bytecode caches, the file system's
            run(command, folder, count, failed)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in chosen}
        for _ in range(runs):
            for name, command in chosen.items():
                times[name].append(run(command, folder, count, failed))
    medians = {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in times.items()
    }
    return medians, failed


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def report(count: int, failed: int, medians: dict[str, tuple[float, float]]) -> None:
    print(f"{count} skills, {failed} failing {FAILING_CHECKS} checks each:  wall s   CPU s")
    for name, (wall, cpu) in medians.items():
        print(f"  {name:22} {wall:16.2f} {cpu:7.2f}")
    for index, kind in ((0, "wall"), (1, "CPU")):
        default = medians["pytest"][index]
        print(
            f"  ratio ({kind}) pytest / pytest --tb=no:"
            f" {default / medians['pytest --tb=no'][index]:.2f} (goal <= 2);"
            f" pytest / agent-skills validate:"
            f" {default / medians['agent-skills validate'][index]:.2f} (goal <= 10)"
        )
        if WHOLE_WALK in medians:
            print(
                f"  ratio ({kind}) pytest, whole walk / pytest:"
                f" {medians[WHOLE_WALK][index] / default:.2f} (skills_walk_skill_folders = true)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=3000)
    parser.add_argument("--failing", type=float, default=0.3, help="share of failing skills")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--double", action="store_true", help="also at 2x the skills (linearity)")
    parser.add_argument("--items", choices=("skill", "check"), default="skill")
    parser.add_argument(
        "--whole-walk", action="store_true", help="also pytest walking all of every skill folder"
    )
    options = parser.parse_args()
    chosen = commands(options.items, options.whole_walk)
    print(
        f"load average {load()} before; median of {options.runs} runs, whole processes;"
        f" skills_items={options.items}"
    )
    medians, failed = measure(options.skills, options.failing, options.runs, chosen)
    report(options.skills, failed, medians)
    if options.double:
        doubled, failed_twice = measure(2 * options.skills, options.failing, options.runs, chosen)
        report(2 * options.skills, failed_twice, doubled)
        for index, kind in ((0, "wall"), (1, "CPU")):
            print(
                f"  ({kind}) time at 2x / time at 1x (goal <= 2: linear): "
                + ", ".join(
                    f"{name} {doubled[name][index] / medians[name][index]:.2f}" for name in medians
                )
            )
    print(f"load average {load()} after")


if __name__ == "__main__":
    main()
