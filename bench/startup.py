"""What the plugin adds to every pytest run: `pytest --co` of a folder with one plain test.

    python bench/startup.py [--runs 15]

Two floors, each measured in this run, interleaved with the run they are compared with:

* every installed plugin with ours disabled (`-p no:agent_skills`) against the same with ours;
* bare pytest (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`) against bare pytest plus ours only.

Bytecode is written and a warm-up run fills the caches first, as on a user's machine (an
environment with PYTHONDONTWRITEBYTECODE would otherwise compile every module on each run).
Prints the median and the fastest of each, the ratios (goal: at most 1.15), and the
modules of the package imported at start-up.
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

VARIANTS = {
    "floor: installed plugins, ours disabled": ({}, ["-p", "no:agent_skills"]),
    "installed plugins with ours": ({}, []),
    "floor: bare pytest": ({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, []),
    "bare pytest with ours only": (
        {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        ["-p", "pytest_agent_skills.plugin"],
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
    env.update(extra)
    return env


def run_once(folder: Path, extra_env: dict[str, str], args: list[str]) -> float:
    command = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *args]
    start = time.perf_counter()
    subprocess.run(
        command, cwd=folder, env=environment(extra_env), check=True, capture_output=True
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each variant")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "test_one.py").write_text("def test_one():\n    assert True\n")
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for extra_env, args in VARIANTS.values():  # warm-up: bytecode caches
            run_once(folder, extra_env, args)
        for _ in range(runs):
            for name, (extra_env, args) in VARIANTS.items():
                times[name].append(run_once(folder, extra_env, args))
        probe = subprocess.run(
            [sys.executable, "-c", PROBE],
            cwd=folder,
            env=environment({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    print(f"pytest --co of one plain test, {runs} runs each (median / fastest, ms):")
    for name, values in times.items():
        print(f"  {name:42} {statistics.median(values) * 1000:7.1f} / {min(values) * 1000:7.1f}")
    for ours, floor in PAIRS:
        median = statistics.median(times[ours]) / statistics.median(times[floor])
        fastest = min(times[ours]) / min(times[floor])
        added = (statistics.median(times[ours]) - statistics.median(times[floor])) * 1000
        print(
            f"ratio {ours!r} / {floor!r}: median {median:.3f}, fastest {fastest:.3f}"
            f" (+{added:.1f} ms; goal <= 1.15)"
        )
    for line in probe.splitlines():
        if line.startswith(("MODULES", "HEAVY")):
            label, _, names = line.partition(" ")
            shown = "package modules imported" if label == "MODULES" else "heavy modules imported"
            print(f"{shown}: {names}")


if __name__ == "__main__":
    main()
