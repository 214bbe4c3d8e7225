"""bench/evals.py runs (small): its five figures are printed (the first with the lower bound
of its runs and the raw client's time), the replay makes no connection off loopback. The
figures themselves are the bench's, not a test's."""

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
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    concurrency = [line for line in lines if line.startswith("1. concurrency: 4 runs, ")]
    assert concurrency, done.stdout
    # 2 runs of 3 requests and 2 of 2 (2 evals, with and without the skill), 8 workers: 3.
    assert "lower bound for these runs 0.06 s" in concurrency[0]
    assert "raw openai client, the same runs 8 at once: " in concurrency[0]
    assert any(line.startswith("2. per request, one after the other") for line in lines)
    assert any("connections off loopback: 0 (goal 0);" in line for line in lines)
    assert any(
        line.startswith("4. the sandbox's cost: 8 runs (4 with a command), --jobs 1, median of 1:")
        for line in lines
    ), done.stdout
    # Against the real model server where it can start, else skipped saying why.
    real = [line for line in lines if line.startswith("5. real model")]
    assert real, done.stdout
    assert ("ratio " in real[0] and "answers repeated " in real[0]) or "skipped (" in real[0]
