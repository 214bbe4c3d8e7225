"""What the plugin adds to every pytest run: `pytest --co` of a folder with one plain test.

    python bench/startup.py [--runs 15]

Two floors, each measured in this run, interleaved with the run they are compared with, and
each loading ours as a user's run does (from its ``pytest11`` entry point, one scan of the
installed distributions paid by the floor too):

* pytest alone: every other installed plugin blocked (``-p no:NAME``), ours blocked too in the
  floor (the goal: at most 1.15 times this);
* the installed plugins of this environment, ours blocked in the floor.

Bytecode is written and a warm-up run fills the caches first, as on a user's machine (an
environment with PYTHONDONTWRITEBYTECODE would otherwise compile every module on each run).
Prints the median and the fastest wall time of each, and the median CPU time (user + system,
which other processes on a busy machine disturb far less than the wall time), the ratios of
both, the load average, and the modules of the package imported at start-up.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

OURS = "agent_skills"


def variants() -> dict[str, list[str]]:
    """The command-line arguments of each variant, floors first."""
    others = sorted({entry.name for entry in entry_points(group="pytest11")} - {OURS})
    alone = [argument for name in others for argument in ("-p", f"no:{name}")]
    return {
        "floor: pytest alone": [*alone, "-p", f"no:{OURS}"],
        "pytest with ours": alone,
        "floor: installed plugins": ["-p", f"no:{OURS}"],
        "installed plugins with ours": [],
    }


PAIRS = (
    ("pytest with ours", "floor: pytest alone"),
    ("installed plugins with ours", "floor: installed plugins"),
)

PROBE = """
import sys, pytest
pytest.main(["--co", "-q", "-p", "no:cacheprovider", "-p", "pytest_agent_skills.plugin"])
ours = sorted(name for name in sys.modules if name.startswith("pytest_agent_skills"))
heavy = sorted(name for name in ("yaml", "jsonschema", "openai", "docker", "httpx", "werkzeug",
    "markdown_it", "mistune", "platformdirs", "filelock") if name in sys.modules)
print("MODULES", " ".join(ours))
print("HEAVY", " ".join(heavy) or "(none)")
"""


def environment(extra: dict[str, str]) -> dict[str, str]:
    unset = ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
    unset += ("PYTEST_DISABLE_PLUGIN_AUTOLOAD",)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(extra)
    return env


def run_once(folder: Path, args: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    command = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, env=environment({}), check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each variant")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "test_one.py").write_text("def test_one():\n    assert True\n")
        arguments = variants()
        times: dict[str, list[float]] = {name: [] for name in arguments}
        cpu: dict[str, list[float]] = {name: [] for name in arguments}
        for args in arguments.values():  # warm-up: bytecode caches
            run_once(folder, args)
        for _ in range(runs):
            for name, args in arguments.items():
                wall, used = run_once(folder, args)
                times[name].append(wall)
                cpu[name].append(used)
        probe = subprocess.run(
            [sys.executable, "-c", PROBE],
            cwd=folder,
            env=environment({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"pytest --co of one plain test, {runs} runs each (ms); load average {load}:")
    print(f"  {'':42} {'wall median':>11} {'wall fastest':>12} {'CPU median':>10}")
    for name in arguments:
        wall, used = times[name], cpu[name]
        print(
            f"  {name:42} {statistics.median(wall) * 1000:11.1f} {min(wall) * 1000:12.1f}"
            f" {statistics.median(used) * 1000:10.1f}"
        )
    for ours, floor in PAIRS:
        wall = statistics.median(times[ours]) / statistics.median(times[floor])
        fastest = min(times[ours]) / min(times[floor])
        used = statistics.median(cpu[ours]) / statistics.median(cpu[floor])
        added = (statistics.median(cpu[ours]) - statistics.median(cpu[floor])) * 1000
        print(
            f"ratio {ours!r} / {floor!r}: wall median {wall:.3f}, wall fastest {fastest:.3f},"
            f" CPU median {used:.3f} (+{added:.1f} ms CPU; goal <= 1.15)"
        )
    others = [name[3:] for name in arguments["pytest with ours"] if name.startswith("no:")]
    print(f"'pytest alone' blocks every other installed plugin: {', '.join(others)}")
    for line in probe.splitlines():
        if line.startswith(("MODULES", "HEAVY")):
            label, _, names = line.partition(" ")
            shown = "package modules imported" if label == "MODULES" else "heavy modules imported"
            print(f"{shown}: {names}")


if __name__ == "__main__":
    main()
