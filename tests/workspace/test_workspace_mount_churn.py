"""A run never depends on the host's mount table staying still.

Docker mounts and unmounts an overlay for every container it starts and stops, autofs
comes and goes, a CI host does both all day.  A runtime that copies the host's mounts one
by one (``bwrap --bind / /`` remounts every submount after binding, and fails when one
vanishes in between) fails a run now and then on such a machine.  Here the mount table
churns (a tmpfs mounted and unmounted in a loop outside the workspace, several at once,
under a mount with shared propagation, as Docker makes ``/var/lib/docker``: so the
unmounts reach every namespace copied from this one as a slave) while the same workspace
runs a command again and again: every run must succeed.

Mounting needs root: as a normal user these tests skip (CI runs as root).
"""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.workspace import WorkspaceError
from tests.support.workspace import get_runtime, make_skill, work_root  # noqa: F401

#: Mount points churned at once (more of them, more chances to hit the moment).
CHURNED = 8
CHURNERS = 2
#: A run succeeds this many times in a row, or for this long, with the table churning.
RUNS = 200
SECONDS = 8.0
#: One churning process: mount(2) and umount(2) straight from libc, thousands a second.
CHURN = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
points = [point.encode() for point in sys.argv[1:]]
while True:
    for point in points:
        libc.mount(b"skills-churn", point, b"tmpfs", 0, None)
    for point in points:
        libc.umount2(point, 0)
"""


@pytest.fixture
def churning_mounts(tmp_path: Path) -> Iterator[list[Path]]:
    """Mount points outside every workspace, under a shared mount, each mounted and unmounted
    in a loop."""
    if os.geteuid() != 0:
        pytest.skip("churning the mount table needs root (mount -t tmpfs)")
    shared = tmp_path / "churn"
    shared.mkdir()
    subprocess.run(["mount", "--bind", str(shared), str(shared)], check=True)
    subprocess.run(["mount", "--make-shared", str(shared)], check=True)
    points = [shared / str(number) for number in range(CHURNED)]
    for point in points:
        point.mkdir()
    loops = [
        subprocess.Popen(
            [sys.executable, "-c", CHURN, *map(str, points[part::CHURNERS])],
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        for part in range(CHURNERS)
    ]
    try:
        deadline = time.monotonic() + 10
        while not any(os.path.ismount(point) for point in points):
            assert time.monotonic() < deadline, "the churn loops never mounted anything"
            time.sleep(0.001)
        yield points
    finally:
        for loop in loops:
            os.killpg(loop.pid, 9)
            loop.wait()
        for point in points:
            while os.path.ismount(point):
                subprocess.run(["umount", "-l", str(point)], check=False)
        subprocess.run(["umount", "-l", str(shared)], check=True)


@pytest.mark.parametrize("kind", ["local", pytest.param("sandbox", marks=pytest.mark.sandbox)])
def test_every_run_succeeds_while_host_mounts_come_and_go(
    kind: str, churning_mounts: list[Path], work_root: Path, tmp_path: Path
) -> None:
    runtime = get_runtime(kind, work_root)
    skill = make_skill(tmp_path / "skills")
    failures: list[str] = []
    runs = 0
    with runtime.create_workspace(f"churn-{kind}") as workspace:
        started = time.monotonic()
        while runs < RUNS and time.monotonic() - started < SECONDS:
            runs += 1
            try:
                result = workspace.run(skill, "bash scripts/hello.sh churn", timeout=60)
            except WorkspaceError as error:
                failures.append(str(error))
                continue
            if result.exit_code != 0 or result.stdout != "hello churn\n":
                failures.append(f"exit {result.exit_code}: {result.stdout!r} {result.stderr!r}")

    assert runs >= 20, f"only {runs} runs in {SECONDS} s: the test says too little"
    assert failures == [], f"{len(failures)} of {runs} runs failed, first: {failures[0]}"
