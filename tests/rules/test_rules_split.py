"""Validation shared out to forked processes: the same reports as in one process, every
child waited for, a failing child reported with how it failed.

The checks that count forks run in a fresh interpreter: the suite's own process may hold a
thread (an HTTP watchdog, say), and then validation rightly stays in one process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_agent_skills.rules import WorkerFailed, _split
from pytest_agent_skills.rules._split import SHARE_AT_LEAST, Split, processes_for
from tests.support.forks import COUNT_FORKS
from tests.support.skill_files import copies_for_shares, write_copies, write_skill

REPO = Path(__file__).resolve().parents[2]

#: Run in a fresh interpreter: validate ROOT with the given jobs, os.fork counted; prints the
#: number of children forked and each report as (file, findings, suppressed).
COUNTING = COUNT_FORKS + """
import json, sys
from pathlib import Path
from pytest_agent_skills.rules import ValidationOptions, parse_per_path_ignores, validate_paths
root = Path(sys.argv[1])
ignores = parse_per_path_ignores(["copy-1/*:field-unknown"], root, "test")
options = ValidationOptions.build(per_path_ignores=ignores)
reports = validate_paths([root], options, jobs=int(sys.argv[2]))
print(json.dumps({
    "forked": len(forked),
    "reports": [
        [str(report.skill.skill_file), [list(f) for f in report.findings],
         [[list(s.finding), s.by, s.line, s.pattern] for s in report.suppressed]]
        for report in reports
    ],
}, default=str))
"""


def counted(root: Path, jobs: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", COUNTING, str(root), str(jobs)],
        capture_output=True, text=True, check=True, timeout=120, cwd=REPO,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_shared_out_the_reports_are_those_of_one_process(tmp_path: Path) -> None:
    copies = copies_for_shares(3)
    write_copies(tmp_path, copies)
    alone = counted(tmp_path, 1)
    for jobs in (2, 3):
        shared = counted(tmp_path, jobs)
        assert shared["forked"] == jobs - 1
        assert shared["reports"] == alone["reports"]
    assert alone["forked"] == 0
    reports = alone["reports"]
    assert isinstance(reports, list) and len(reports) == 7 * copies
    rules = {finding[0] for _file, findings, _suppressed in reports for finding in findings}
    # What must cross from the children intact: name clashes found across the shares, findings
    # kept and findings an ignore comment or a per-path ignore suppressed.
    assert {"name-duplicate", "name-charset", "reference-missing", "field-unknown"} <= rules
    ways = {item[1] for _file, _findings, suppressed in reports for item in suppressed}
    assert ways == {"comment", "per-path-ignore"}


def test_fewer_skills_than_the_threshold_stay_in_one_process(tmp_path: Path) -> None:
    for index in range(2 * SHARE_AT_LEAST - 1):
        write_skill(tmp_path, f"skill-{index:03d}")
    assert counted(tmp_path, 4)["forked"] == 0


def test_with_another_thread_running_validation_stays_in_one_process() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert processes_for(1000, 2) == 1
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize(
    ("load_figures", "busy"),
    [
        ("3.90 3.10 2.00 1/212 5151", 0.0),  # this process alone runnable, after a busy minute
        ("0.00 0.00 0.00 2/212 5151", 0.25),  # one other task runnable now
        ("0.10 0.00 0.00 3/212 5151", 0.5),
        ("0.00 0.00 0.00 9/212 5151", 1.0),  # more runnable than processors: all busy
    ],
)
def test_how_busy_the_machine_is_counts_the_tasks_runnable_now_besides_this_one(
    load_figures: str, busy: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_file = tmp_path / "loadavg"
    load_file.write_text(load_figures + "\n")
    monkeypatch.setattr(_split, "LOAD_FILE", str(load_file))
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    assert _split._busy_share() == busy


@pytest.mark.parametrize("load_figures", [None, "0.00 0.00 0.00\n", "garbled\n"])
def test_without_the_kernel_s_runnable_count_the_load_average_says(
    load_figures: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_file = tmp_path / "loadavg"  # absent (not Linux), or without its fourth field
    if load_figures is not None:
        load_file.write_text(load_figures)
    monkeypatch.setattr(_split, "LOAD_FILE", str(load_file))
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0, 1.0, 1.0))
    assert _split._busy_share() == 0.75


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_each_process_takes_its_least_share_of_skills() -> None:
    least = SHARE_AT_LEAST
    counts = (2 * least - 1, 2 * least, 3 * least - 1, 3 * least, 31 * least + 5)
    script = (
        "from pytest_agent_skills.rules._split import processes_for\n"
        f"print([processes_for(count, 100) for count in {counts}],"
        f" [processes_for({10 * least}, jobs) for jobs in (1, 2, 4)])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout == "[1, 2, 2, 3, 31] [1, 2, 4]\n"


def _raise_in_child(share: Sequence[int]) -> list[int]:
    raise ValueError(f"boom in a share of {len(share)}")


def _killed(share: Sequence[int]) -> list[int]:
    os.kill(os.getpid(), signal.SIGKILL)
    return list(share)


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the children forked in the test (os.fork itself does the forking)."""
    pids: list[int] = []
    real_fork = os.fork

    def recording_fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)
    return pids


def reaped(pids: list[int]) -> bool:
    """Whether every one of ``pids`` was waited for (no longer a child of this process)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return bool(pids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_that_raises_is_reported_with_its_traceback(forked: list[int]) -> None:
    split = Split(10, _raise_in_child, 2)
    assert list(split.own) == [0, 2, 4, 6, 8]
    with pytest.raises(WorkerFailed) as caught:
        split.gather()
    message = str(caught.value)
    assert message.startswith("a validation worker process (pid ")
    assert ") failed:\nTraceback (most recent call last):" in message
    assert message.endswith("ValueError: boom in a share of 5\n")
    assert reaped(forked)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_ended_by_a_signal_is_reported_with_the_way_out(forked: list[int]) -> None:
    split = Split(9, _killed, 3)
    with pytest.raises(WorkerFailed) as caught:
        split.gather()
    message = str(caught.value)
    assert message.endswith(
        ") was ended by signal 9 before sending its results; run with --jobs 1 to validate"
        " every skill in one process"
    )
    assert reaped(forked)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_the_shares_interleave_and_come_back_in_order(forked: list[int]) -> None:
    split = Split(11, lambda share: [index * index for index in share], 3)
    assert split.own == [0, 3, 6, 9]
    assert split.gather() == [([1, 4, 7, 10], [1, 16, 49, 100]), ([2, 5, 8], [4, 25, 64])]
    assert reaped(forked)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_without_files_in_memory_the_results_come_through_a_temporary_file_left_nowhere(
    forked: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR read again
    big = "x" * 200_000  # more than a pipe holds
    split = Split(4, lambda share: [big + str(index) for index in share], 2)
    if Path("/proc/self/fd").is_dir():  # the child's file: in tmp_path, already unlinked
        held = {os.readlink(link) for link in Path("/proc/self/fd").iterdir() if link.is_symlink()}
        assert any(path.startswith(f"{tmp_path}/agent-skills-results-") for path in held)
    assert split.gather() == [([1, 3], [big + "1", big + "3"])]
    assert reaped(forked)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_lighter_own_share_is_spread_along_the_items(forked: list[int]) -> None:
    split = Split(1000, lambda share: list(share), 2, own_weight=0.5)
    shares = [split.own, *(share for share, _results in split.gather())]
    assert sorted(index for share in shares for index in share) == list(range(1000))
    assert [len(share) for share in shares] == [350, 650]  # a third, to a twentieth
    # Every stretch of the items has some of this process's share, not only the start.
    assert {index // 100 for index in split.own} == set(range(10))
    assert reaped(forked)


def with_no_child_left(script: str, root: Path) -> str:
    """What ``script`` prints, run in a fresh interpreter with ``root`` as its argument, then
    ``no child left`` when it left no child process behind."""
    ending = (
        "try:\n    os.waitpid(-1, os.WNOHANG)\n"
        "except ChildProcessError:\n    print('no child left')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script + ending, str(root)],
        capture_output=True, text=True, check=True, timeout=120, cwd=REPO,
    )
    return done.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_when_this_process_fails_its_error_stands_and_no_child_is_left(tmp_path: Path) -> None:
    write_copies(tmp_path, copies_for_shares(2))
    script = COUNT_FORKS + (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from pytest_agent_skills.rules import _validate, validate_paths\n"
        "parent = os.getpid()\n"
        "def failing(skill, options):\n"
        "    if os.getpid() == parent:\n"
        "        raise RuntimeError('the parent failed')\n"
        "    return iter(())\n"
        "_validate.RULE_FUNCTIONS['references'] = failing\n"
        "try:\n"
        "    validate_paths([Path(sys.argv[1])], jobs=2)\n"
        "except RuntimeError as error:\n"
        "    print(error)\n"
        "print(len(forked), 'forked')\n"
    )
    printed = with_no_child_left(script, tmp_path)
    assert printed == "the parent failed\n1 forked\nno child left\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_skill_gone_before_a_child_reads_it_is_the_error_of_one_process(tmp_path: Path) -> None:
    write_copies(tmp_path, copies_for_shares(2))
    script = (
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "from pytest_agent_skills.rules import validate_paths\n"
        "from pytest_agent_skills.skill import Skill, SkillNotFoundError\n"
        "parent = os.getpid()\n"
        "load_all = Skill.load_all\n"
        "def removing_first(folders, listings=None):\n"
        "    if os.getpid() != parent:  # in a child: its first SKILL.md removed since the walk\n"
        "        (folders[0] / 'SKILL.md').unlink()\n"
        "    return load_all(folders, listings)\n"
        "Skill.load_all = removing_first\n"
        "root = Path(sys.argv[1])\n"
        "try:\n"
        "    validate_paths([root], jobs=2)\n"
        "except SkillNotFoundError as error:\n"
        "    print(error)\n"
        "print(json.dumps([str(folder) for folder in sorted(root.glob('*/*'))"
        " if not (folder / 'SKILL.md').exists()]))\n"
    )
    printed = with_no_child_left(script, tmp_path)
    error, gone, left = printed.splitlines()
    [folder] = json.loads(gone)  # the one the child removed
    assert error == f"{folder}: no SKILL.md in this folder (a skill is a folder holding SKILL.md)"
    assert left == "no child left"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_that_cannot_be_started_is_an_error_and_the_others_are_waited_for(
    monkeypatch: pytest.MonkeyPatch, forked: list[int]
) -> None:
    recording_fork = os.fork

    def fork_once() -> int:  # the system refuses a second process, as at a process limit
        if forked:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return recording_fork()

    monkeypatch.setattr(os, "fork", fork_once)
    with pytest.raises(WorkerFailed) as caught:
        Split(12, lambda share: list(share), 3)
    assert str(caught.value) == (
        "cannot start a validation worker process (Resource temporarily unavailable); run with"
        " --jobs 1 to validate every skill in one process"
    )
    assert len(forked) == 1
    assert reaped(forked)
