"""A run never depends on the host's mount table staying still.

Docker mounts and unmounts an overlay for every container it starts and stops, autofs
comes and goes, a CI host does both all day.  A runtime that copies the host's mounts one
by one (``bwrap --bind / /`` remounts every submount after binding, and fails when one
vanishes in between) fails a run now and then on such a machine.  Here the mount table
churns (a tmpfs mounted and unmounted in a loop outside the workspace, several at once,
under a mount with shared propagation, as Docker makes ``/var/lib/docker``: so the
unmounts reach every namespace copied from this one as a slave) while the same workspace
runs a command again and again: every run must succeed.

Mounting needs root: as a normal user these tests skip (CI runs as root).  The local
runtime of a normal user (its own user namespace) is checked from root: root churns the
mounts while a fresh uid runs the commands.
"""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
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


class Churn:
    """Mount points under a mount with shared propagation (made at once); :meth:`start`
    mounts and unmounts each in a loop until the end of the test."""

    def __init__(self, folder: Path) -> None:
        self.shared = folder
        self.shared.mkdir()
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        subprocess.run(["mount", "--make-shared", str(folder)], check=True)
        self.points = [folder / str(number) for number in range(CHURNED)]
        for point in self.points:
            point.mkdir()
        self.loops: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        self.loops = [
            subprocess.Popen(
                [sys.executable, "-c", CHURN, *map(str, self.points[part::CHURNERS])],
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
            for part in range(CHURNERS)
        ]
        deadline = time.monotonic() + 10
        while not any(os.path.ismount(point) for point in self.points):
            assert time.monotonic() < deadline, "the churn loops never mounted anything"
            time.sleep(0.001)

    def stop(self) -> None:
        for loop in self.loops:
            os.killpg(loop.pid, 9)
            loop.wait()
        for point in self.points:
            while os.path.ismount(point):
                subprocess.run(["umount", "-l", str(point)], check=False)
        subprocess.run(["umount", "-l", str(self.shared)], check=True)


@pytest.fixture
def churn(tmp_path: Path) -> Iterator[Churn]:
    if os.geteuid() != 0:
        pytest.skip("churning the mount table needs root (mount -t tmpfs)")
    # Not under pytest's temporary folder (0700): a normal user's run must see it too.
    holder = Path(tempfile.mkdtemp(prefix="skills-churn-"))
    holder.chmod(0o755)
    made = Churn(holder / "churn")
    try:
        yield made
    finally:
        made.stop()
        shutil.rmtree(holder)


@pytest.fixture
def churning_mounts(churn: Churn) -> list[Path]:
    """Mount points outside every workspace, each mounted and unmounted in a loop."""
    churn.start()
    return churn.points


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


#: Run as a normal user: once root churns (a mount point is seen mounted), run the commands
#: and print how many ran and every failure.
AS_A_NORMAL_USER = """
import json, os, sys, time
from pathlib import Path
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import WorkspaceError
from pytest_agent_skills.workspace.local import LocalRuntime
ready, runs, seconds, *points = sys.argv[1:]
scratch = Path(os.environ["TMPDIR"])
folder = scratch / "skills" / "demo"
(folder / "scripts").mkdir(parents=True)
(folder / "SKILL.md").write_text("---\\nname: demo\\ndescription: A test skill.\\n---\\nRun it.\\n")
(folder / "scripts" / "hello.sh").write_text('echo "hello $1"\\n')
skill = Skill.load(folder)
Path(ready).write_text("ready")
waiting = time.monotonic()
deadline = waiting + 30
# What the wait saw, not a second look: the churn unmounts every point many times a second.
seen = False
while not seen and time.monotonic() < deadline:
    seen = any(os.path.ismount(point) for point in points)
    if not seen:
        time.sleep(0.001)
waited = round(time.monotonic() - waiting, 3)
with open("/proc/self/mountinfo", encoding="utf-8") as table:
    view = [line.strip() for line in table if "skills-churn" in line]
failures, done = [], 0
with LocalRuntime(work_root=scratch / "workspaces", isolate=True) as runtime:
    with runtime.create_workspace("churn") as workspace:
        started = time.monotonic()
        while done < int(runs) and time.monotonic() - started < float(seconds):
            done += 1
            try:
                result = workspace.run(skill, "bash scripts/hello.sh churn", timeout=60)
            except WorkspaceError as error:
                failures.append(str(error))
                continue
            if result.exit_code != 0 or result.stdout != "hello churn\\n":
                failures.append(f"exit {result.exit_code}: {result.stdout!r} {result.stderr!r}")
report = {"runs": done, "failures": failures, "uid": os.geteuid(), "seen": seen}
print(json.dumps({**report, "waited": waited, "view": view}))
"""


def test_a_normal_users_runs_succeed_while_host_mounts_come_and_go(
    churn: Churn, request: pytest.FixtureRequest
) -> None:
    from bench.support.normal_user import run_as_normal_user

    ready = churn.shared.parent / "ready"
    ready.parent.chmod(0o777)
    outcome: list[subprocess.CompletedProcess[str]] = []
    # The user's view is made before the churn starts: the harness itself uses bubblewrap.
    inner = threading.Thread(
        target=lambda: outcome.append(
            run_as_normal_user(
                ["-c", AS_A_NORMAL_USER, str(ready), str(RUNS), str(SECONDS)]
                + [str(point) for point in churn.points],
                project=request.config.rootpath,
                timeout=300,
            )
        )
    )
    inner.start()
    started = time.monotonic()
    while not ready.exists() and inner.is_alive() and time.monotonic() < started + 120:
        time.sleep(0.01)
    churned_after = None
    if ready.exists():
        churn.start()
        churned_after = round(time.monotonic() - started, 3)
    inner.join()

    done = outcome[0]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["uid"] != 0
    assert report["seen"], (
        "the normal user's runs never saw a churned mount: root churned"
        f" {churned_after} s after the user started (None: the user never said it was ready),"
        f" the user waited {report['waited']} s; its mounts under the churn folder:"
        f" {report['view']}"
    )
    assert report["runs"] >= 20, f"only {report['runs']} runs in {SECONDS} s"
    failures = report["failures"]
    assert failures == [], f"{len(failures)} of {report['runs']} runs failed, first: {failures[0]}"
