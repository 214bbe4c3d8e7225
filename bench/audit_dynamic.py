"""Cost of one detonation run (``agent-skills audit --dynamic``) per script, against the bare
isolated runtime's start measured in the same run.

    python bench/audit_dynamic.py [--runs 20] [--runtimes sandbox,docker]

Every figure is a median of calls interleaved with its floors (machine load hits all alike),
the load average printed before and after:

  sandbox  one detonation of ``python3 scripts/hello.py`` (fresh bait, the sink, NAT rules,
           strace, snapshots before and after, the report read back) against
           - bare ``bwrap <the same system mounts and namespaces> true``: the sandbox's start;
           - bare ``bwrap ... python3 scripts/hello.py``: the same script, unwatched;
  docker   the same detonation in a container against ``docker run --network none IMAGE
           true`` (create, start, wait, remove: the container's start).

No goal is asserted: the figures say what watching a script costs over running it isolated.
A runtime that is missing is reported and skipped.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run_overhead import load, medians_ms, row
from pytest_agent_skills.audit.detonation import Detonator, open_isolation
from pytest_agent_skills.audit.runs import PlannedRun
from pytest_agent_skills.audit.seam import DynamicOptions, DynamicUnavailableError
from pytest_agent_skills.workspace.sandbox import (
    ISOLATION_FLAGS,
    SCRATCH_MOUNTS,
    find_bwrap,
    system_mounts,
)

SCRIPT = "scripts/hello.py"
INSIDE = "/workspace/skills/bench"


def make_skill(root: Path) -> Path:
    folder = root / "bench"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: bench\ndescription: Bench skill. Use when benchmarking.\n---\n\nbody\n"
    )
    (folder / SCRIPT).write_text("import json\nprint(json.dumps({'ok': True}))\n")
    return folder


def detonation(runtime: str) -> Detonator | None:
    try:
        return Detonator(DynamicOptions(runtime=runtime), open_isolation(runtime))
    except DynamicUnavailableError as error:
        print(f"  {runtime:<8} unavailable: {error}")
        return None


def bench_sandbox(skill: Path, runs: int) -> None:
    detonator = detonation("sandbox")
    if detonator is None:
        return
    planned = PlannedRun(f"python3 {SCRIPT}", SCRIPT, None, "script")
    bare = [find_bwrap(), *system_mounts(), *SCRATCH_MOUNTS, *ISOLATION_FLAGS]
    script = [*bare[:1], "--ro-bind", str(skill), INSIDE, *bare[1:], "--chdir", INSIDE]
    python = detonator.isolation.tools["python"]

    def run(argv: list[str]) -> Callable[[], object]:
        return lambda: subprocess.run(argv, capture_output=True, check=True)

    def ours() -> object:
        reading = detonator.detonate(planned, skill, INSIDE)
        assert reading.findings == [] and reading.not_analyzed == [], reading.findings
        return reading

    try:
        mine, floor, alone = medians_ms(
            [ours, run([*bare, "true"]), run([*script, python, SCRIPT])], runs, warmup=1
        )
    finally:
        detonator.close()
    row("sandbox", mine, floor, "bwrap ... true: the sandbox's start", "detonate")
    row("", mine, alone, f"bwrap ... python3 {SCRIPT}: the script unwatched", "detonate")


def bench_docker(skill: Path, runs: int) -> None:
    detonator = detonation("docker")
    if detonator is None:
        return
    planned = PlannedRun(f"python3 {SCRIPT}", SCRIPT, None, "script")
    isolation = detonator.isolation
    client, image = isolation.client, isolation.image  # type: ignore[attr-defined]

    def ours() -> object:
        return detonator.detonate(planned, skill, INSIDE)

    def bare() -> object:
        return client.containers.run(image, ["true"], network_mode="none", remove=True)

    try:
        mine, floor = medians_ms([ours, bare], runs, warmup=1)
    finally:
        detonator.close()
    row("docker", mine, floor, "docker run --network none IMAGE true", "detonate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--runtimes", default="sandbox,docker")
    args = parser.parse_args()
    kinds = [kind.strip() for kind in args.runtimes.split(",") if kind.strip()]
    print(f"({load()})")
    with tempfile.TemporaryDirectory(prefix="skills-bench-") as temporary:
        skill = make_skill(Path(temporary))
        print(f"dynamic run cost per script (median of {args.runs} runs, interleaved):")
        if "sandbox" in kinds:
            bench_sandbox(skill, args.runs)
        if "docker" in kinds:
            bench_docker(skill, args.runs)
    print(f"({load()})")


if __name__ == "__main__":
    main()
