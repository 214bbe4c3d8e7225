"""Run a bench script as a person does (its own process, from the repository's root) and check
the shape of what it prints: the figures and ratios, never their values."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "bench"
NUMBER = r"\d+(?:\.\d+)?"


def run_bench(script: str, *arguments: str, timeout: float = 600) -> str:
    """The standard output of ``bench/<script> <arguments>``, which must exit 0.

    The script imports this checkout's package, whatever is installed."""
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, str(BENCH / script), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert completed.returncode == 0, (
        f"bench/{script} exited with status {completed.returncode}\n"
        f"--- stdout\n{completed.stdout}\n--- stderr\n{completed.stderr}"
    )
    return completed.stdout


def assert_lines(output: str, *patterns: str) -> None:
    """Each regular expression matches (``re.search``) at least one line of ``output``."""
    lines = output.splitlines()
    missing = [p for p in patterns if not any(re.search(p, line) for line in lines)]
    assert not missing, "no line matches " + ", ".join(map(repr, missing)) + f" in:\n{output}"


def check_runtime_listed(output: str, runtime: str) -> None:
    """Skip (or fail, where the services are required) when the bench printed that
    ``runtime`` is unavailable (its row ``  RUNTIME  unavailable: REASON``)."""
    from tests.support.services import missing_service

    unavailable = re.search(rf"^  {runtime}\s+unavailable: (.*)$", output, re.M)
    if unavailable:
        missing_service(f"runtime {runtime!r} unavailable: {unavailable[1]}")
