"""What the plugin adds to every pytest run: `pytest --co` of a folder with one plain test.

    python bench/startup.py [--runs 15]

Two floors, each measured in this run, interleaved with the run they are compared with:

* every installed plugin with ours disabled (`-p no:agent_skills`) against the same with ours;
* bare pytest (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`) against bare pytest plus ours only
  (`PYTEST_PLUGINS=pytest_agent_skills.plugin`).

Bytecode is written and a warm-up run fills the caches first, as on a user's machine (an
environment with PYTHONDONTWRITEBYTECODE would otherwise compile every module on each run).
Prints the median and the fastest wall time of each, and the median CPU time (user + system,
which other processes on a busy machine disturb far less than the wall time), the ratios of
both (goal: at most 1.15), and the modules of the package imported at start-up.
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
from pathlib import Path

VARIANTS = {
    "floor: installed plugins, ours disabled": ({}, ["-p", "no:agent_skills"]),
    "installed plugins with ours": ({}, []),
    "floor: bare pytest": ({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, []),
    # PYTEST_PLUGINS, not -p: pytest looks every -p name up among all installed entry points
    # first, a cost a user's run (which loads ours from its entry point) does not pay.
    "bare pytest with ours only": (
        {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_PLUGINS": "pytest_agent_skills.plugin"},
        [],
    ),
}
PAIRS = (
    ("installed plugins with ours", "floor: installed plugins, ours disabled"),
    ("bare pytest with ours only", "floor: bare pytest"),
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
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_PLUGINS", None)
    env.update(extra)
    return env


def run_once(folder: Path, extra_env: dict[str, str], args: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    command = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, cwd=folder, env=environment(extra_env), check=True, capture_output=True
    )
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
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        cpu: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for extra_env, args in VARIANTS.values():  # warm-up: bytecode caches
            run_once(folder, extra_env, args)
        for _ in range(runs):
            for name, (extra_env, args) in VARIANTS.items():
                wall, used = run_once(folder, extra_env, args)
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
    print(f"pytest --co of one plain test, {runs} runs each (ms):")
    print(f"  {'':42} {'wall median':>11} {'wall fastest':>12} {'CPU median':>10}")
    for name in VARIANTS:
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
    for line in probe.splitlines():
        if line.startswith(("MODULES", "HEAVY")):
            label, _, names = line.partition(" ")
            shown = "package modules imported" if label == "MODULES" else "heavy modules imported"
            print(f"{shown}: {names}")


if __name__ == "__main__":
    main()
