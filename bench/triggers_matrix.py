"""The trigger matrix of 50 skills x 6 queries x 3 runs replayed offline, as a user runs it.

    python bench/triggers_matrix.py [--small]

The repository is the report tests' 50 skills, each about its own topic and a neighbour's
(bench/support/routing.py), recorded once from the loopback word-overlap model (not timed).
Then ``agent-skills triggers`` replays the 900 runs as a whole process, with ``--record none``
(median of 3), and prints its wall time against the goal of 5 s; beside it, the same process
with nothing to replay (a repository of one skill and one query: start-up, imports, the
report), the floor every replay pays, and the replay's cost per run above it.

``--small`` (5 skills, one replay) checks that the script works; its figures mean nothing.
Note the load average beside the figures: the machine's other work slows every path.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.support.recording import recording  # noqa: E402
from bench.support.routing import many_skills, word_overlap_endpoint, write_repository  # noqa: E402
from pytest_agent_skills.evals.triggers.matrix import MatrixRequest, run_matrix  # noqa: E402

GOAL_SECONDS = 5.0
RUNS = 3


def _replay(folder: Path) -> tuple[float, float]:
    """Seconds ``agent-skills triggers`` takes to replay the matrix of ``folder/skills``: wall
    time, and processor time (user and system), which other work on the machine slows less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "triggers", "skills", "-q",
         "--runs", str(RUNS), "--model", "fake-agent", "--min-recall", "0",
         "--min-precision", "0", "--out", "out"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"the replay failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    processor = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, processor


def _recorded(folder: Path, count: int) -> int:
    """``folder/skills``: ``count`` skills, their matrix recorded; the runs recorded."""
    skills = write_repository(folder, many_skills(count))
    with word_overlap_endpoint() as (_model, url):
        outcome = run_matrix(MatrixRequest((skills,), recording(url, folder, runs=RUNS, jobs=4)))
    failed = [query for query in outcome.document.queries if query.errors]
    if failed:
        sys.exit(f"the recording failed: {failed[0].query!r}: {failed[0].error_messages[0]}")
    return sum(query.runs for query in outcome.document.queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="5 skills, one replay")
    small = parser.parse_args().small
    count, rounds = (5, 1) if small else (50, 3)
    with tempfile.TemporaryDirectory(prefix="bench-matrix-") as temporary:
        big, floor_folder = Path(temporary, "big"), Path(temporary, "floor")
        runs = _recorded(big, count)
        skills = write_repository(floor_folder, {"only-skill": ("Does one thing.", [("x", True)])})
        with word_overlap_endpoint() as (_model, url):
            run_matrix(MatrixRequest((skills,), recording(url, floor_folder, runs=RUNS)))
        print(f"load average {os.getloadavg()[0]:.2f}; {count} skills, {runs} runs recorded")
        replays = [_replay(big) for _ in range(rounds)]
        floors = [_replay(floor_folder) for _ in range(rounds)]
        replay, replay_cpu = (statistics.median(part) for part in zip(*replays, strict=True))
        floor, floor_cpu = (statistics.median(part) for part in zip(*floors, strict=True))
        verdict = "met" if replay <= GOAL_SECONDS else "NOT met"
        print(
            f"replay: {replay:.2f} s for {runs} runs, processor {replay_cpu:.2f} s"
            f" (goal <= {GOAL_SECONDS:g} s: {verdict})"
        )
        print(
            f"floor: {floor:.2f} s, processor {floor_cpu:.2f} s (one query);"
            f" {(replay_cpu - floor_cpu) / runs * 1000:.2f} ms of processor a run above"
        )


if __name__ == "__main__":
    main()
