"""Per-call overhead of ``Workspace.run("true")`` per runtime, first-call cost, and staging cost.

    python bench/run_overhead.py [--runs 50] [--runtimes local,sandbox,docker]

Every figure is printed next to a floor measured in the same run, calls interleaved, with the
load average before and after:

run overhead (goal <= 1.3x the floor), each floor with the environment a skill command gets:
  local    a bare ``bash -lc true`` with a clean HOME: what a user would otherwise run.  The
           run's skill is staged with 10 other skills (their folders are hidden too); as root,
           the local row is measured again as a fresh unprivileged uid (``--no-normal-user``:
           not).  For the reading, not as floors: ``bash -lc true`` in a session of its own
           (``setsid``, as every runtime starts a command), and the namespace tool around it
           (what the isolation costs by itself)
  sandbox  bare ``bwrap <same system mounts and namespaces> true`` and ``... bash -lc true``
  docker   ``exec_run(["true"])`` into the same running container (Docker SDK)
first call in a fresh workspace, typical 1 MB skill (goal: staging adds <= 15 ms):
  first ``run("true")`` (stage + run; docker also creates the container) against a later run
staging alone, 1 MB and 100 MB skills:
  copy mode (what the local runtime always uses) against ``cp -r`` of the same tree;
  link mode (sandbox and docker) - independent of the size
100 MB skill, first call per runtime (the trade-off of copying for the local runtime).
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
from pytest_agent_skills.workspace.process import new_tag
from pytest_agent_skills.workspace.removal import remove_tree
from pytest_agent_skills.workspace.staging import stage_skill

PROJECT = Path(__file__).resolve().parents[1]
FIRST_CALL_GOAL_MS = 15.0
MIB = 1024 * 1024
#: Skills staged beside the one run (a repository holds more than one; each one's own folder
#: is hidden from the local runtime's commands).
OTHER_SKILLS = 10


def medians_ms(
    actions: list[Callable[[], object]],
    runs: int,
    warmup: int = 3,
    setups: list[Callable[[], object]] | None = None,
) -> list[float]:
    """Median time of each action, calls interleaved so that machine load hits all alike.

    ``setups[i]`` (untimed) runs before each call of ``actions[i]``.
    """
    setups = setups or [lambda: None for _ in actions]
    for _ in range(warmup):
        for setup, action in zip(setups, actions, strict=True):
            setup()
            action()
    samples: list[list[float]] = [[] for _ in actions]
    for _ in range(runs):
        for index, action in enumerate(actions):
            setups[index]()
            started = time.perf_counter()
            action()
            samples[index].append((time.perf_counter() - started) * 1000)
    return [statistics.median(series) for series in samples]


def make_skill(root: Path, name: str, payload_bytes: int) -> Skill:
    """A skill like a real one (SKILL.md, 20 scripts, docs), padded with data to the size."""
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "docs").mkdir()
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: bench skill\n---\nbody\n")
    for index in range(20):
        (folder / "scripts" / f"step{index}.py").write_text("print('ok')\n" * 40)
        (folder / "docs" / f"page{index}.md").write_text("# Page\n" + "text " * 200)
    with (folder / "data.bin").open("wb") as handle:
        remaining = max(0, payload_bytes - _size(folder))
        while remaining > 0:
            chunk = os.urandom(min(MIB, remaining))
            handle.write(chunk)
            remaining -= len(chunk)
    return Skill.load(folder)


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def row(label: str, ours: float, floor: float, floor_label: str, what: str = "run('true')") -> None:
    print(
        f"  {label:<8} {what} {ours:8.2f} ms | floor {floor:8.2f} ms ({floor_label})"
        f" | ratio {ours / floor:5.2f}x"
    )


def open_runtime(kind: str, work_root: Path, **options: object):
    try:
        return create_runtime(kind, work_root=work_root, **options)  # type: ignore[arg-type]
    except RuntimeUnavailableError as error:
        print(f"  {kind:<8} unavailable: {error}")
        return None


def bench_runtime(kind: str, skill: Skill, work_root: Path, runs: int) -> None:
    runtime = open_runtime(kind, work_root)
    if runtime is None:
        return
    clean_home = Path(tempfile.mkdtemp(dir=work_root))
    # The floor gets the same environment a skill command gets (allowlist + HOME), so the
    # ratio measures our orchestration, not e.g. bash loading the locale that LANG names.
    clean_env = build_environment(
        workspace_vars={}, home=str(clean_home), extra=None, tag=new_tag()
    )
    bash = shutil.which("bash") or "bash"  # absolute, as the runtimes use it (no PATH search)
    with runtime, runtime.create_workspace("bench") as workspace:
        workspace.run(skill, "true")

        def ours() -> object:
            return workspace.run(skill, "true")

        def bare(argv: list[str], session: bool = False) -> Callable[[], object]:
            return lambda: subprocess.run(
                argv, env=clean_env, capture_output=True, check=True, start_new_session=session
            )

        if kind == "local":
            for index in range(OTHER_SKILLS):  # the other skills of the repository, staged too
                workspace.stage_skill(make_skill(work_root / "others", f"other-{index}", 0))
            spaces = runtime.namespaces  # type: ignore[attr-defined]
            # The floor; then, for the reading: in a session of its own (as every runtime starts
            # a command: no controlling terminal; with the scheduler's autogroups a new session
            # competes as a group of its own on a loaded machine), and the namespace tool too.
            floors = [bare([bash, "-lc", "true"]), bare([bash, "-lc", "true"], session=True)]
            if spaces:  # the same namespaces and mounts, done bare
                hidden = sorted(str(s.source) for s in workspace.staged.values())
                scratch = Path(tempfile.mkdtemp(dir=work_root))
                floors.append(bare(spaces.argv(hidden, [bash, "-lc", "true"], scratch), True))
            mine, *floor = medians_ms([ours, *floors], runs)
            who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
            tool = runtime.isolation_tool or "none"  # type: ignore[attr-defined]
            print(
                f"  (local isolation as {who}: {runtime.isolation}, one step: {tool};"  # type: ignore[attr-defined]
                f" {len(workspace.staged)} skills staged)"
            )
            row(kind, mine, floor[0], "bash -lc true, clean HOME")
            readings = [("setsid bash -lc true", floor[1])]
            if spaces:
                readings.append((f"setsid {tool} ... bash -lc true", floor[2]))
            for label, figure in readings:
                print(
                    f"  {'':<8} (not a floor: {label} {figure:8.2f} ms,"
                    f" {figure / floor[0]:4.2f}x bash -lc true; ours {mine / figure:4.2f}x it)"
                )
        elif kind == "sandbox":
            sandbox = runtime.base_argv()  # type: ignore[attr-defined]
            mine, floor, floor_bash = medians_ms(
                [ours, bare([*sandbox, "true"]), bare([*sandbox, bash, "-lc", "true"])], runs
            )
            row(kind, mine, floor, "bwrap ... true")
            row("", mine, floor_bash, "bwrap ... bash -lc true")
        else:
            container = runtime.container_for(workspace)  # type: ignore[attr-defined]
            mine, floor = medians_ms([ours, lambda: container.exec_run(["true"])], runs)
            row(kind, mine, floor, "docker exec_run(['true'])")


def first_call(runtime, skill: Skill, runs: int) -> tuple[float, float]:
    """Median first ``run("true")`` in a fresh workspace, and median later run."""
    firsts, laters = [], []
    for _ in range(runs):
        with runtime.create_workspace("first") as workspace:
            started = time.perf_counter()
            workspace.run(skill, "true")
            firsts.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            workspace.run(skill, "true")
            laters.append((time.perf_counter() - started) * 1000)
    return statistics.median(firsts), statistics.median(laters)


def bench_first_calls(
    kinds: list[str], skill: Skill, work_root: Path, runs: int, *, typical: bool = True
) -> None:
    for kind in kinds:
        runtime = open_runtime(kind, work_root)
        if runtime is None:
            continue
        with runtime:
            first, later = first_call(runtime, skill, runs)
        if kind == "docker":
            # Creating the workspace's container dominates; the goal is about staging, whose
            # docker (link) figure is in the staging rows.
            goal, extra = "(container creation, not staging)", " (creates the container)"
        else:
            goal = f"(goal <= {FIRST_CALL_GOAL_MS:.0f} ms)" if typical else "(goal: <= 1 MB only)"
            extra = ""
        print(
            f"  {kind:<8} first run {first:8.2f} ms{extra} | later run {later:8.2f} ms"
            f" | first call adds {first - later:7.2f} ms {goal}"
        )


def bench_staging(work_root: Path, skills: dict[str, Skill], runs: int) -> None:
    for label, skill in skills.items():
        count = runs if "100" not in label else max(3, runs // 10)
        copy_root, link_root, floor_root = (work_root / f"staged-{kind}" for kind in "clf")
        for folder in (copy_root, link_root, floor_root):
            folder.mkdir(exist_ok=True)

        def clear(folder: Path) -> Callable[[], object]:
            return lambda: remove_tree(folder / skill.name)  # noqa: B023 - used in this pass

        def stage(mode: str, folder: Path) -> Callable[[], object]:
            return lambda: stage_skill(skill, folder, mode, "bench")  # noqa: B023

        def cp_r() -> object:
            source, copy = skill.directory.resolve(), floor_root / skill.name  # noqa: B023
            return subprocess.run(["cp", "-r", str(source), str(copy)], check=True)

        copy, link, floor = medians_ms(
            [stage("copy", copy_root), stage("link", link_root), cp_r],
            count,
            warmup=1,
            setups=[clear(copy_root), clear(link_root), clear(floor_root)],
        )
        row(label, copy, floor, "cp -r of the same tree", "copy stage_skill")
        print(f"  {label:<8} link stage_skill {link:8.2f} ms (no copy; sandbox and docker only)")


def load() -> str:
    return "load average " + ", ".join(f"{figure:.2f}" for figure in os.getloadavg())


def bench_as_normal_user(runs: int) -> None:
    """The local row again, as a fresh unprivileged uid (run from root)."""
    from bench.support.normal_user import run_as_normal_user

    script = Path(__file__).resolve().relative_to(PROJECT).as_posix()
    inner = run_as_normal_user(
        [script, "--runs", str(runs), "--runtimes", "local", "--overhead-only"],
        project=PROJECT,
        timeout=1800,
    )
    lines = inner.stdout.splitlines()[1:] or [f"  local as a normal user failed: {inner.stderr}"]
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--runtimes", default="local,sandbox,docker")
    parser.add_argument("--overhead-only", action="store_true", help="only the run overhead")
    parser.add_argument(
        "--no-normal-user", action="store_true", help="as root: not the local row as a normal user"
    )
    args = parser.parse_args()
    kinds = [kind.strip() for kind in args.runtimes.split(",") if kind.strip()]
    print(f"({load()})")
    with tempfile.TemporaryDirectory(prefix="skills-bench-") as temporary:
        root = Path(temporary)
        tiny = make_skill(root / "skills", "tiny", 0)
        print(f"run overhead (median of {args.runs} calls, goal <= 1.3x the floor):")
        for kind in kinds:
            bench_runtime(kind, tiny, root, args.runs)
        if "local" in kinds and os.geteuid() == 0 and not args.no_normal_user:
            bench_as_normal_user(args.runs)
        if args.overhead_only:
            return
        typical = make_skill(root / "skills", "typical", MIB)
        big = make_skill(root / "skills", "big", 100 * MIB)
        print(
            f"first call in a fresh workspace, {_size(typical.directory) / MIB:.1f} MB skill"
            f" (median of {max(5, args.runs // 5)}):"
        )
        bench_first_calls(kinds, typical, root, max(5, args.runs // 5))
        print("staging alone (copy: the local runtime; link: sandbox and docker):")
        bench_staging(root, {"1 MB": typical, "100 MB": big}, args.runs)
        print("100 MB skill, first call per runtime (median of 3; local copies it):")
        bench_first_calls(kinds, big, root, 3, typical=False)
    print(f"({load()})")


if __name__ == "__main__":
    main()
