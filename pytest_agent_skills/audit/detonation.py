"""The detonation run (``agent-skills audit --dynamic``): each command an agent following a
skill would run (:mod:`.runs`) executed once, alone, in a fresh isolated world
(:mod:`.isolation`) baited with honeytokens (:mod:`.honeytokens`) and watched by a supervisor
(:mod:`.inside`); what it did becomes findings (:mod:`.observations`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..skill import Skill
from .honeytokens import HOME, Bait
from .isolation import (
    SCRATCH,
    TRACE_FOLDER,
    WORKSPACE,
    Isolation,
    SandboxIsolation,
)
from .model import NotAnalyzed
from .observations import SHELL_STARTUP, RunReading
from .runs import PlannedRun, planned_runs, recorded_runs
from .seam import DynamicOptions, DynamicResult, DynamicTarget, DynamicUnavailableError

#: Bounds of one run: its time, and the output of each stream kept and searched.
RUN_SECONDS = 20.0
OUTPUT_CAP = 1024 * 1024
PAYLOAD_CAP = 64 * 1024
#: How long processes left running are watched after the command ended, before they are killed.
LINGER_SECONDS = 2.0
TRACE_CAP = 16 * 1024 * 1024
#: The port of the sink's TCP listener (every connection is redirected there).
SINK_PORT = 10080
#: The calls strace records: opens, every call that changes a file, programs, connections.
TRACED = (
    "open,openat,creat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,"
    "symlink,symlinkat,link,linkat,truncate,chmod,fchmodat,execve,connect,sendto"
)
#: What the isolation gets on top of a run's bound (setting up, reading the report).
SETUP_SECONDS = 30.0


def open_isolation(runtime: str | None) -> Isolation:
    """The sandbox, else Docker (``runtime`` names one of them); never the host."""
    if runtime not in (None, "sandbox", "docker"):
        raise DynamicUnavailableError(
            f"--dynamic runs skills in the isolated runtimes only ('sandbox' or 'docker'), not"
            f" {runtime!r}: a detonation run never executes on the host"
        )
    reasons = []
    if runtime in (None, "sandbox"):
        try:
            return SandboxIsolation()
        except Exception as error:  # DetonationUnavailableError, find_bwrap's, and the like
            reasons.append(f"sandbox: {error}")
    if runtime in (None, "docker"):
        from .docker_isolation import DockerIsolation

        try:
            return DockerIsolation()
        except Exception as error:
            reasons.append(f"docker: {error}")
    raise DynamicUnavailableError(
        "--dynamic needs an isolated runtime and found none; it never runs a skill on the host. "
        + " | ".join(reasons)
    )


class Detonator:
    """The detonation run of one audit (:class:`~.seam.DynamicAnalysis`)."""

    def __init__(self, options: DynamicOptions, isolation: Isolation) -> None:
        self.options = options
        self.isolation = isolation
        self.seconds = RUN_SECONDS
        #: Every canary planted so far (what a check of the host looks for).
        self.planted: set[str] = set()

    def analyze(self, target: DynamicTarget) -> DynamicResult:
        try:
            skill = Skill.load(target.folder).require_parsed()
        except Exception as error:  # a skill the static half reports as unreadable
            reason = f"not run: the skill could not be read ({error})"
            return DynamicResult([], [NotAnalyzed(file="SKILL.md", reason=reason)], 0)
        inside = f"{WORKSPACE}/skills/{_folder_name(target)}"
        runs = planned_runs(skill, inside)
        not_analyzed: list[NotAnalyzed] = []
        if self.options.cassettes is not None:
            recorded, unread = recorded_runs(self.options.cassettes, target.name)
            runs += recorded
            not_analyzed += [
                NotAnalyzed(file=entry.split(":", 1)[0], reason=entry) for entry in unread
            ]
        findings = []
        for planned in runs:
            declared = f"{skill.name} {skill.description}"
            reading = self.detonate(planned, target.folder.resolve(), inside, declared)
            findings += [finding for finding in reading.findings if finding not in findings]
            not_analyzed += reading.not_analyzed
        return DynamicResult(findings, not_analyzed, len(runs))

    def detonate(
        self, planned: PlannedRun, folder: Path, inside: str, declared: str = ""
    ) -> RunReading:
        """One command in a fresh world with fresh bait; its reading (``declared``: what the
        skill says of itself, its name and description)."""
        bait = Bait.fresh()
        self.planted.update(bait.canaries)
        orders = self.orders(planned.command, inside, bait)
        report = self.isolation.run(orders, folder, self.seconds + SETUP_SECONDS)
        return RunReading(planned, report, bait, inside, declared).read()

    def orders(self, command: str, inside: str, bait: Bait) -> dict[str, Any]:
        tools = self.isolation.tools
        environment = {
            "HOME": HOME,
            "USER": "auditor",
            "LOGNAME": "auditor",
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "WORKSPACE_DIR": WORKSPACE,
            "SKILLS_DIR": f"{WORKSPACE}/skills",
            "SKILL_NAME": inside.rsplit("/", 1)[1],
            **bait.variables,
        }
        return {
            "command": command,
            "cwd": inside,
            "skill": inside,
            "workspace": WORKSPACE,
            "home": HOME,
            "home_files": {
                path: {"content": text, "mode": 0o600} for path, text in bait.files.items()
            },
            "watched": [HOME, *SCRATCH],
            "env": environment,
            "timeout": self.seconds,
            "linger": LINGER_SECONDS,
            "output_cap": OUTPUT_CAP,
            "payload_cap": PAYLOAD_CAP,
            "sink_port": SINK_PORT,
            "trace": f"{TRACE_FOLDER}/trace",
            "trace_cap": TRACE_CAP,
            "traced": TRACED,
            "canary_variants": bait.variants(),
            "shown_files": list(SHELL_STARTUP),
            **{name: path for name, path in tools.items() if name != "python"},
        }

    def close(self) -> None:
        self.isolation.close()


def _folder_name(target: DynamicTarget) -> str:
    name = target.folder.resolve().name
    return name if name and name not in (".", "..") else target.name


def start_dynamic(options: DynamicOptions) -> Detonator:
    """The detonation run of ``options``, ready for its first skill; raises
    :class:`DynamicUnavailableError` when it cannot run here (no isolated runtime: it never
    runs a skill on the host)."""
    return Detonator(options, open_isolation(options.runtime))
