"""The detonation run never touches the host: every malicious script and shell block of the
corpus runs under ``--dynamic`` as root, and afterwards the real HOME, ``/tmp`` and ``/root``
hold none of what the runs wrote in their own world, no file of theirs holds a canary of the
runs, and no process of the runs is left; no packet leaves the run's loopback.

Other engineers' processes write under ``/tmp`` and ``/root/.cache`` while this runs, so the
check is not "nothing changed at all" but: nothing the runs did (each write and each process
the supervisor saw, by its path or command) shows on the host, and no new or changed file
near the top of those folders holds a canary planted in this test.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from pytest_agent_skills.audit.detonation import Detonator
from pytest_agent_skills.audit.honeytokens import HOME as FAKE_HOME
from pytest_agent_skills.audit.model import AuditFinding
from pytest_agent_skills.audit.runs import PlannedRun
from pytest_agent_skills.audit.seam import DynamicTarget
from pytest_agent_skills.skill import Skill
from tests.support.detonation import corpus, started

pytestmark = pytest.mark.sandbox

#: How deep below each watched folder the snapshot goes (dotfiles, ~/.ssh/x, ~/.claude/x).
DEPTH = 3
CONTENT_CAP = 1024 * 1024


def _watched() -> list[Path]:
    return sorted({Path.home(), Path("/root"), Path("/tmp")})


def _snapshot(roots: list[Path]) -> dict[str, tuple[int, int]]:
    """Path -> (size, mtime) of every entry at most :data:`DEPTH` levels below ``roots``."""
    seen: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, dirnames, filenames in os.walk(root):
            if folder.count("/") - str(root).rstrip("/").count("/") >= DEPTH:
                dirnames[:] = []
            for name in dirnames + filenames:
                path = os.path.join(folder, name)
                try:
                    stat = os.lstat(path)
                except OSError:
                    continue
                seen[path] = (stat.st_size, stat.st_mtime_ns)
    return seen


def _processes() -> dict[int, str]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            found[int(entry)] = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return found


def _host_paths(finding: AuditFinding) -> list[Path]:
    """Where the path a finding names would be on the host (the fake HOME is the real one)."""
    path = finding.evidence
    if path.startswith(FAKE_HOME + "/"):
        relative = path[len(FAKE_HOME) + 1 :]
        return [Path.home() / relative, Path("/root") / relative]
    if path.startswith("/tmp/"):
        return [Path(path)]
    return []


class Detonated(NamedTuple):
    analysis: Detonator
    findings: list[AuditFinding]
    #: Commands run per skill, and the scripts each skill holds.
    runs: dict[str, int]
    before: dict[str, tuple[int, int]]
    processes_before: dict[int, str]


@pytest.fixture(scope="module")
def detonated() -> Iterator[Detonated]:
    if os.geteuid() != 0:
        pytest.skip("the host-untouched proof runs the corpus as root (CI runs it as root)")
    before, processes_before = _snapshot(_watched()), _processes()
    findings: list[AuditFinding] = []
    runs: dict[str, int] = {}
    for analysis in started("sandbox"):
        for skill in corpus("malicious"):
            result = analysis.analyze(DynamicTarget(skill.name, skill))
            findings += result.findings
            runs[skill.name] = result.runs
        yield Detonated(analysis, findings, runs, before, processes_before)


def test_every_malicious_script_ran_and_did_harm_in_its_own_world(detonated: Detonated) -> None:
    scripts = 0
    for skill in corpus("malicious"):
        count = len(Skill.load(skill).scripts)
        assert detonated.runs[skill.name] >= count, skill.name
        scripts += count
    assert scripts >= 7
    rules = {finding.rule for finding in detonated.findings}
    assert {"dynamic-persistence", "dynamic-honeytoken-read", "dynamic-process-left"} <= rules


def test_the_real_home_tmp_and_root_hold_nothing_the_runs_wrote(detonated: Detonated) -> None:
    analysis, findings, before = detonated.analysis, detonated.findings, detonated.before
    after = _snapshot(_watched())

    written = [path for finding in findings for path in _host_paths(finding)]
    assert written, "the corpus writes into HOME and /tmp in its own world"
    for path in written:
        assert before.get(str(path)) == after.get(str(path)), path
    changed = [path for path in after if before.get(path) != after[path]]
    needles = [canary.encode() for canary in analysis.planted]
    needles += [base64.b64encode(canary.encode()) for canary in analysis.planted]
    for path in changed:
        if os.path.isfile(path) and not os.path.islink(path):
            try:
                with open(path, "rb") as handle:
                    content = handle.read(CONTENT_CAP)
            except OSError:
                continue
            assert not any(needle in content for needle in needles), path


def test_no_process_of_the_runs_is_left_on_the_host(detonated: Detonated) -> None:
    """Other detonation runs may go on meanwhile (other tests, other people): a process of
    theirs lives in a PID namespace of its own, one escaped from a run would be in the host's."""
    left = {f.evidence for f in detonated.findings if f.rule == "dynamic-process-left"}
    assert left, "the corpus leaves processes behind in its own world"
    host = os.readlink("/proc/self/ns/pid")
    new = {
        pid: command
        for pid, command in _processes().items()
        if pid not in detonated.processes_before and _namespace(pid) == host
    }
    assert [command for command in new.values() if command and command in left] == []
    control = str(detonated.analysis.isolation.control)  # type: ignore[attr-defined]
    assert [command for command in new.values() if control in command] == []
    assert [pid for pid in new if _parent(pid) == os.getpid()] == []


def _namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def test_no_packet_leaves_the_runs_loopback(tmp_path: Path) -> None:
    probe = (
        'cat /proc/net/dev; python3 -c "import socket; s = socket.create_connection('
        "('probe.packet-check.invalid', 443), timeout=3); s.sendall(b'knock'); s.recv(1)\""
    )
    for analysis in started("sandbox"):
        bait_before = set(analysis.planted)
        reading = analysis.detonate(
            PlannedRun(probe, "SKILL.md", 1, "shell block"), tmp_path, "/workspace/skills/probe"
        )
        assert analysis.planted != bait_before

    report = reading.report
    interfaces = base64.b64decode(report["stdout"]).decode().splitlines()[2:]
    assert [line.split(":")[0].strip() for line in interfaces] == ["lo"]
    assert [(c["name"], c["port"], c["size"]) for c in report["connections"]] == [
        ("probe.packet-check.invalid", 443, 5)
    ]
    assert report["connections"][0]["address"].startswith("127.")
