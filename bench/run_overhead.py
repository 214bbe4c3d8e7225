"""Per-call overhead of ``Workspace.run("true")`` per runtime, next to its floor, and staging cost.

    python bench/run_overhead.py [--runs 50] [--runtimes local,sandbox,docker]

Floors, measured in the same run:
  local    bare ``bash -lc true`` subprocess, output captured
  (each floor runs with the environment a skill command gets: the allowlist and a clean HOME)
  sandbox  bare ``bwrap <same mounts and namespaces> true`` (and ``... bash -lc true``)
  docker   ``exec_run(["true"])`` into the same running container (Docker SDK)
Goal: ratio <= 1.3x.  Staging: first ``stage_skill`` (and first run) of a 1 MB and a
100 MB skill, link mode (goal: independent of size) and copy mode for contrast.
A runtime whose engine is missing is reported and skipped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import RuntimeUnavailableError, create_runtime
from pytest_agent_skills.workspace.environment import build_environment


def medians_ms(actions: list[Callable[[], object]], runs: int, warmup: int = 3) -> list[float]:
    """Median time of each action, calls interleaved so that machine load hits all alike."""
    for _ in range(warmup):
        for action in actions:
            action()
    samples: list[list[float]] = [[] for _ in actions]
    for _ in range(runs):
        for index, action in enumerate(actions):
            started = time.perf_counter()
            action()
            samples[index].append((time.perf_counter() - started) * 1000)
    return [statistics.median(series) for series in samples]


def make_skill(root: Path, name: str, payload_bytes: int) -> Skill:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: bench skill\n---\nbody\n")
    (folder / "scripts" / "run.sh").write_text("echo ok\n")
    with (folder / "data.bin").open("wb") as handle:
        chunk = os.urandom(1024 * 1024)
        for _ in range(payload_bytes // len(chunk)):
            handle.write(chunk)
    return Skill.load(folder)


def row(label: str, ours: float, floor: float, floor_label: str) -> None:
    print(
        f"  {label:<8} run('true') {ours:8.2f} ms | floor {floor:8.2f} ms ({floor_label})"
        f" | ratio {ours / floor:5.2f}x"
    )


def bench_runtime(kind: str, skill: Skill, work_root: Path, runs: int) -> None:
    try:
        runtime = create_runtime(kind, work_root=work_root)
    except RuntimeUnavailableError as error:
        print(f"  {kind:<8} unavailable: {error}")
        return
    clean_home = Path(tempfile.mkdtemp(dir=work_root))
    # The floor gets the same environment a skill command gets (allowlist + HOME), so the
    # ratio measures our orchestration, not e.g. bash loading the locale that LANG names.
    clean_env = build_environment(workspace_vars={}, home=str(clean_home), extra=None)
    bash = shutil.which("bash") or "bash"  # absolute, as the runtimes use it (no PATH search)
    with runtime, runtime.create_workspace("bench") as workspace:
        workspace.run(skill, "true")

        def ours() -> object:
            return workspace.run(skill, "true")

        def bare(argv: list[str]) -> Callable[[], object]:
            return lambda: subprocess.run(argv, env=clean_env, capture_output=True, check=True)

        if kind == "local":
            mine, floor = medians_ms([ours, bare([bash, "-lc", "true"])], runs)
            row(kind, mine, floor, "bash -lc true")
        elif kind == "sandbox":
            from pytest_agent_skills.workspace.sandbox import BASE_MOUNTS, ISOLATION_FLAGS

            sandbox = [runtime.bwrap, *BASE_MOUNTS, *ISOLATION_FLAGS]  # type: ignore[attr-defined]
            mine, floor, floor_bash = medians_ms(
                [ours, bare([*sandbox, "true"]), bare([*sandbox, bash, "-lc", "true"])], runs
            )
            row(kind, mine, floor, "bwrap ... true")
            row("", mine, floor_bash, "bwrap ... bash -lc true")
        else:
            container = runtime.container_for(workspace)  # type: ignore[attr-defined]
            mine, floor = medians_ms([ours, lambda: container.exec_run(["true"])], runs)
            row(kind, mine, floor, "docker exec_run(['true'])")


def bench_staging(work_root: Path, skills: dict[str, Skill]) -> None:
    for mode in ("link", "copy"):
        runtime = create_runtime("local", work_root=work_root, stage_mode=mode)
        with runtime:
            for label, skill in skills.items():
                with runtime.create_workspace("stage") as workspace:
                    started = time.perf_counter()
                    workspace.stage_skill(skill)
                    staged = (time.perf_counter() - started) * 1000
                with runtime.create_workspace("first-run") as workspace:
                    started = time.perf_counter()
                    workspace.run(skill, "true")
                    first = (time.perf_counter() - started) * 1000
                print(
                    f"  {mode:<5} {label:>6} skill: stage_skill {staged:8.2f} ms,"
                    f" first run (stage + run) {first:8.2f} ms"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--runtimes", default="local,sandbox,docker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skills-bench-") as temporary:
        root = Path(temporary)
        small = make_skill(root / "skills", "small", 0)
        print(f"run overhead (median of {args.runs} calls, goal <= 1.3x the floor):")
        for kind in args.runtimes.split(","):
            bench_runtime(kind.strip(), small, root, args.runs)
        print("first-run staging (goal: link staging independent of skill size):")
        skills = {
            "1 MB": make_skill(root / "skills", "one-mb", 1024 * 1024),
            "100 MB": make_skill(root / "skills", "hundred-mb", 100 * 1024 * 1024),
        }
        bench_staging(root, skills)


if __name__ == "__main__":
    main()
