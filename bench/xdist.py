"""pytest-xdist over many skills: `pytest -n 2` against a serial run of the same 1,000 skills.

    python bench/xdist.py [--skills 1000] [--runs 5]

Each skill is a valid SKILL.md (one item, every check), one in fifty with an error and one in a
hundred sharing another's name, in a dot-folder root listed in ``skills_roots`` (as a skill
repository has it).  Serial and ``-n 2`` runs alternate (each writes JUnit XML); printed: the
median and fastest wall time of each, the median CPU time of all its processes (user + system:
the controller and the workers), the ratio ``-n 2`` / serial (goal: at most 1.0 on a 2-core
machine; the median of the ratios of runs side by side), and whether both runs gave identical
results (every item's outcome).

The floor, measured in the same rounds: as many plain Python test functions, serial and
``-n 2``, with this plugin blocked (``-p no:agent_skills``: pytest and pytest-xdist alone).

Then one run of each with a probe plugin, for a breakdown: the CPU time of each process by
phase (start-up, collection, tests, finish) and the messages a worker sends per item.  From it:
what pytest-xdist itself adds per item (the floor's tests phase under ``-n 2``, every process,
against serial) next to the whole serial cost of an item.  On two cores the controller and
both workers share two CPUs, so ``-n 2`` takes at least half its CPU time: it can beat serial
only when what xdist adds per item is below what an item costs serially.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

#: Loaded with ``-p`` in the breakdown runs only: CPU time of this process at each phase and,
#: in a worker, the messages it sends to the controller (pytest-xdist's WorkerInteractor).
PROBE = '''
import collections, json, os, resource

marks = {}
messages = collections.Counter()


def _cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pytest_configure(config):
    marks["start-up"] = _cpu()
    for plugin in config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor":
            send = plugin.sendevent
            plugin.sendevent = lambda name, **kw: (messages.update([name]), send(name, **kw))


def pytest_collection(session):
    marks["collection start"] = _cpu()


def pytest_collection_finish(session):
    marks["collection"] = _cpu()


def pytest_sessionfinish(session):
    marks["tests"] = _cpu()


def pytest_unconfigure(config):
    marks["finish"] = _cpu()
    name = getattr(config, "workerinput", {}).get("workerid", "controller")
    with open(os.environ["XDIST_BENCH_PROBE_OUT"], "a") as out:
        out.write(json.dumps({"process": name, "marks": marks, "messages": messages}) + "\\n")
'''


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


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    unset = ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
    return {**{k: v for k, v in os.environ.items() if k not in unset}, **(extra or {})}


def run(
    folder: Path, extra: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, list[str]]:
    """Wall time, CPU time of every process, and each item's outcome (from the JUnit XML)."""
    report = folder / "report.xml"
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
        *extra,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, capture_output=True, env=environment(env))
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    outcomes = []
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = next((child.tag for child in case if child.tag != "system-out"), "passed")
        outcomes.append(f"{case.get('classname')}::{case.get('name')} {outcome}")
    return elapsed, cpu, sorted(outcomes)


def phases(folder: Path, extra: list[str], probe_dir: Path) -> list[dict]:
    """One run with the probe: per process, the CPU time spent in each phase and the messages
    sent."""
    out = probe_dir / "probe.jsonl"
    out.unlink(missing_ok=True)
    env = {"PYTHONPATH": str(probe_dir), "XDIST_BENCH_PROBE_OUT": str(out)}
    run(folder, [*extra, "-p", "xdist_bench_probe"], env)
    processes = []
    for line in out.read_text().splitlines():
        data = json.loads(line)
        marks = data["marks"]
        spent = {"start-up": marks["start-up"]}
        if "collection" in marks:
            spent["collection"] = marks["collection"] - marks["collection start"]
        spent["tests"] = marks["tests"] - marks.get("collection", marks["start-up"])
        spent["finish"] = marks["finish"] - marks["tests"]
        processes.append({"process": data["process"], "spent": spent, "messages": data["messages"]})
    return sorted(processes, key=lambda item: (item["process"] != "controller", item["process"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    items = options.skills  # one item per skill (the default skills_items = skill)
    with tempfile.TemporaryDirectory() as temp:
        skills, plain, probe = (Path(temp) / name for name in ("skills-repo", "plain", "probe"))
        for folder in (skills, plain, probe):
            folder.mkdir()
        make_skills(skills, options.skills)
        make_plain_tests(plain, items)
        (probe / "xdist_bench_probe.py").write_text(PROBE)
        floor = ["-p", "no:agent_skills"]
        variants = {
            "skills serial": (skills, []),
            "skills -n 2": (skills, ["-n", "2"]),
            "floor serial": (plain, floor),
            "floor -n 2": (plain, [*floor, "-n", "2"]),
        }
        load_before = os.getloadavg()
        for folder, extra in variants.values():  # warm-up: bytecode caches
            run(folder, extra)
        results: dict[str, list[tuple[float, float, list[str]]]] = {name: [] for name in variants}
        for _ in range(options.runs):
            for name, (folder, extra) in variants.items():
                results[name].append(run(folder, extra))
        breakdown = {name: phases(*variant, probe) for name, variant in variants.items()}
        load_after = os.getloadavg()

    def load(values: tuple[float, float, float]) -> str:
        return ", ".join(f"{value:.2f}" for value in values)

    print(
        f"{options.skills} skills ({items} items) and a floor of {items} plain tests (pytest and"
        f" xdist alone), {options.runs} rounds; load average {load(load_before)} before,"
        f" {load(load_after)} after"
    )
    print(f"  {'':16} {'wall median':>11} {'fastest':>8} {'CPU median':>10}  (all processes, s)")
    for name, runs in results.items():
        walls, cpus = [wall for wall, _, _ in runs], [cpu for _, cpu, _ in runs]
        print(
            f"  {name:16} {statistics.median(walls):11.2f} {min(walls):8.2f}"
            f" {statistics.median(cpus):10.2f}"
        )
    for label in ("skills", "floor"):
        serial, parallel = results[f"{label} serial"], results[f"{label} -n 2"]
        pairs = statistics.median(p[0] / s[0] for s, p in zip(serial, parallel, strict=True))
        fastest = min(p[0] for p in parallel) / min(s[0] for s in serial)
        cpu = statistics.median(p[1] for p in parallel) / statistics.median(s[1] for s in serial)
        identical = all(s[2] == p[2] for s, p in zip(serial, parallel, strict=True))
        goal = " (goal: wall <= 1.0)" if label == "skills" else ""
        print(
            f"ratio {label} -n 2 / serial: wall {pairs:.2f} (median of runs side by side),"
            f" fastest {fastest:.2f}, CPU {cpu:.2f}{goal}; {len(serial[0][2])} outcomes,"
            f" identical: {identical}"
        )

    print("CPU time by process and phase, one probed run each (s; per item: ms):")
    tests: dict[str, float] = {}
    for name, processes in breakdown.items():
        tests[name] = sum(process["spent"]["tests"] for process in processes)
        for process in processes:
            spent = process["spent"]
            shown = ", ".join(f"{phase} {seconds:.2f}" for phase, seconds in spent.items())
            ran = process["messages"].get("runtest_protocol_complete", items)  # a worker's
            per_item = spent["tests"] / ran * 1000
            sent = sum(process["messages"].values())
            messages = f"; {sent / ran:.1f} messages sent per item" if sent else ""
            print(
                f"  {name:14} {process['process']:10} {shown}"
                f" (tests: {per_item:.2f} per item{messages})"
            )
    added = (tests["floor -n 2"] - tests["floor serial"]) / items * 1000
    print(
        f"xdist's own cost per item (floor, tests phase of every process, -n 2 minus serial):"
        f" +{added:.2f} ms CPU; a whole item's tests phase serially: plain test"
        f" {tests['floor serial'] / items * 1000:.2f} ms, skill (every check)"
        f" {tests['skills serial'] / items * 1000:.2f} ms"
    )
    parallel, serial = (
        statistics.median(used for _, used, _ in results[name])
        for name in ("skills -n 2", "skills serial")
    )
    print(
        f"on 2 cores the controller and both workers share two CPUs: skills -n 2 takes at least"
        f" its CPU time / 2 = {parallel / 2:.2f} s, serial about its CPU time {serial:.2f} s;"
        " -n 2 can beat serial only when xdist's cost per item is below an item's serial cost"
    )


if __name__ == "__main__":
    main()
