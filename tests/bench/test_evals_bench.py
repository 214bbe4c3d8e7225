"""bench/evals.py runs (small): its three figures are printed, the replay makes no
connection off loopback. The figures themselves are the bench's, not a test's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_evals_bench_runs_small() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "evals.py"), "--small"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("1. concurrency: 4 runs, ") for line in lines), done.stdout
    assert any(line.startswith("2. per request, one after the other") for line in lines)
    assert any("connections off loopback: 0 (goal 0);" in line for line in lines)
