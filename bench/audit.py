"""Benchmark: the static ``agent-skills audit`` against ``agent-skills validate`` on the same
generated skills, whole processes, in the same run.

    python bench/audit.py [--skills 3000] [--runs 3]

Each command is a process of its own with its start-up and imports (as a user or CI runs it),
measured interleaved, best of --runs, after one warm-up run each: the bare interpreter
(``python -c pass``, the floor both pay), ``agent-skills validate ROOT`` (its default ``--jobs
auto``) and ``agent-skills audit ROOT``.  The skills are those bench/validate.py generates (a
SKILL.md, a doc and a script each).  Prints the wall and CPU times and the ratio audit /
validate (goal: at most 2x), and the load average before and after: other work slows every
side.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.validate import Clock, generate, load_average

GOAL = 2.0


def agent_skills(*arguments: str) -> list[str]:
    entry = "import sys; from pytest_agent_skills.cli import main; sys.exit(main())"
    return [sys.executable, "-c", entry, *arguments]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=3000, help="generated skills")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each command")
    args = parser.parse_args()
    print(f"before: {load_average()}")
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "skills"
        generate(root, args.skills)
        variants = {
            "interpreter": [sys.executable, "-c", "pass"],
            "validate": agent_skills("validate", "--exit-zero", str(root)),
            "audit": agent_skills("audit", "--fail-on", "critical", str(root)),
        }
        clock = Clock(root.parent)
        for label, command in variants.items():  # warm-up: bytecode, file system caches
            clock.run(label, command)
        clock.wall.clear()
        clock.cpu.clear()
        for _ in range(args.runs):
            for label, command in variants.items():
                clock.run(label, command)
        audited = clock.outputs["audit"].splitlines()[-2]
    print(f"generated {args.skills} skills, best of {args.runs} (wall ms / CPU ms)")
    for label in variants:
        print(f"  {label:<12} {clock.wall[label] * 1e3:9.1f} {clock.cpu[label] * 1e3:9.1f}")
    print(f"  audit says: {audited}")
    ratio = clock.wall["audit"] / clock.wall["validate"]
    cpu_ratio = clock.cpu["audit"] / clock.cpu["validate"]
    verdict = "holds" if ratio <= GOAL else "over the goal"
    print(
        f"audit / validate: {clock.wall['audit'] * 1e3:.1f} ms / {clock.wall['validate'] * 1e3:.1f}"
        f" ms = {ratio:.2f}x (CPU {cpu_ratio:.2f}x; goal <= {GOAL:g}x: {verdict})"
    )
    print(f"after: {load_average()}")


if __name__ == "__main__":
    main()
