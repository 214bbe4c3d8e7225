"""Where a detonation run executes: the bubblewrap sandbox, else a Docker container; never
the host.

Both give the run the same world: the host's system folders read-only (secrets hidden),
fresh size-bounded tmpfs for the fake HOME, the workspace, ``/tmp``, ``/var/tmp`` and
``/run``, the skill folder read-only inside the workspace, a network namespace of its own
with only ``lo`` (the supervisor routes everything there, to its sink), a ``resolv.conf``
naming the sink, and a PID namespace that dies with the run.  The supervisor
(:mod:`.inside`) gets the orders on stdin and answers with its report on stdout; nothing
of the run is written to the host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from ..workspace.errors import RuntimeUnavailableError
from ..workspace.sandbox import (
    bound_system_folders,
    find_bwrap,
    listening_sockets,
    socket_masks,
    system_mounts,
)
from .honeytokens import HOME

WORKSPACE = "/workspace"
CONTROL = "/audit"
TRACE_FOLDER = "/audit-trace"
#: The watched folders outside the workspace (besides HOME), each a fresh tmpfs.
SCRATCH = ("/tmp", "/var/tmp", "/run")
TMPFS_BYTES = 64 * 1024 * 1024
RESOLV_CONF = "nameserver 127.0.0.1\noptions attempts:1 timeout:1\n"
INSIDE = Path(__file__).with_name("inside.py")
#: What the run needs from the system folders, found where a Debian system keeps it.
TOOLS = ("setpriv", "strace", "ip", "bash")
PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3")
#: The run's report (JSON on the supervisor's stdout) may not grow past this.
REPORT_CAP = 32 * 1024 * 1024
#: Capabilities the supervisor holds in the run's own user namespace, and drops for the command.
SUPERVISOR_CAPABILITIES = ("CAP_NET_ADMIN", "CAP_NET_BIND_SERVICE", "CAP_SETPCAP")


class DetonationUnavailableError(RuntimeUnavailableError):
    """Neither the sandbox nor Docker can hold a detonation run here (the reason says why)."""


def system_tools() -> dict[str, Any]:
    """Paths of the tools the supervisor uses, as the sandbox sees them (the host's /usr)."""
    found: dict[str, Any] = {}
    for name in TOOLS:
        path = shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
        if path is None:
            raise DetonationUnavailableError(
                f"the dynamic audit needs '{name}' in /usr/bin or /usr/sbin (Debian: apt-get"
                " install strace iproute2 util-linux); scripts/setup-services.sh installs it"
            )
        found[name] = path
    iptables = shutil.which("iptables", path="/usr/sbin:/sbin")
    if iptables is None:
        raise DetonationUnavailableError(
            "the dynamic audit needs 'iptables' in /usr/sbin to send every connection of a run"
            " to its sink (Debian: apt-get install iptables); scripts/setup-services.sh"
            " installs it"
        )
    real = os.path.realpath(iptables)
    # xtables-*-multi picks the tool by argv[0]: name it, wherever the alternative points.
    found["iptables"] = [real, "iptables"] if "multi" in os.path.basename(real) else [real]
    python = next((path for path in PYTHONS if os.access(path, os.X_OK)), None)
    if python is None:
        raise DetonationUnavailableError(
            "the dynamic audit needs a system python3 (/usr/bin/python3) to run its supervisor"
            " inside the sandbox"
        )
    found["python"] = python
    return found


class Isolation(ABC):
    """One way of running the supervisor with its orders, away from the host."""

    name: str
    #: The paths of the supervisor's tools inside the isolation (see :func:`system_tools`).
    tools: dict[str, Any]
    #: The host folder mounted read-only at :data:`CONTROL`: the supervisor, resolv.conf.
    control: Path

    def make_control(self) -> None:
        """The control folder: a private temporary folder of the supervisor and resolv.conf."""
        self.control = Path(tempfile.mkdtemp(prefix="agent-skills-audit-"))
        shutil.copyfile(INSIDE, self.control / "inside.py")
        (self.control / "resolv.conf").write_text(RESOLV_CONF, encoding="utf-8")

    @abstractmethod
    def run(self, orders: dict[str, Any], skill: Path, timeout: float) -> dict[str, Any]:
        """The supervisor's report for ``orders`` (the skill folder mounted read-only)."""

    def close(self) -> None:
        """Free what the isolation holds."""
        shutil.rmtree(self.control, ignore_errors=True)


class SandboxIsolation(Isolation):
    """bubblewrap with a user namespace of its own (the supervisor's capabilities are those
    of that namespace: no power over anything of the host)."""

    name = "sandbox"

    def __init__(self) -> None:
        self.bwrap = find_bwrap()
        self.tools = system_tools()
        self.make_control()
        self.searched = bound_system_folders()

    def argv(self, skill: Path, skill_inside: str) -> list[str]:
        size = str(TMPFS_BYTES)
        argv = [self.bwrap, "--unshare-user", "--uid", "0", "--gid", "0"]
        for capability in SUPERVISOR_CAPABILITIES:
            argv += ["--cap-add", capability]
        argv += system_mounts()
        argv += ["--ro-bind", str(self.control / "resolv.conf"), "/etc/resolv.conf"]
        argv += ["--dev", "/dev", "--proc", "/proc", "--dir", "/var"]
        for folder in (*SCRATCH, HOME, WORKSPACE, TRACE_FOLDER):
            argv += ["--size", size, "--tmpfs", folder]
        argv += ["--symlink", "../run", "/var/run"]
        argv += ["--ro-bind", str(skill), skill_inside]
        argv += ["--ro-bind", str(self.control), CONTROL]
        argv += socket_masks([*self.searched, str(skill)], listening_sockets())
        argv += [
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session", "--chdir", "/",
            "--", self.tools["python"], "-I", "-S", f"{CONTROL}/inside.py",
        ]  # fmt: skip
        return argv

    def run(self, orders: dict[str, Any], skill: Path, timeout: float) -> dict[str, Any]:
        argv = self.argv(skill, str(orders["skill"]))
        return _report(argv, orders, timeout)


def _report(argv: list[str], orders: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run the supervisor (``argv``) with ``orders``; its report, or ``setup_errors``."""
    try:
        done = subprocess.run(
            argv,
            input=json.dumps(orders).encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"setup_errors": [f"the run's supervisor did not answer within {timeout:.0f}s"]}
    if len(done.stdout) > REPORT_CAP:
        return {"setup_errors": ["the run's report is larger than its bound"]}
    try:
        report = json.loads(done.stdout)
    except ValueError:
        detail = done.stderr.decode("utf-8", "replace").strip()[-600:]
        return {"setup_errors": [f"the run's supervisor failed (exit {done.returncode}): {detail}"]}
    if not isinstance(report, dict):
        return {"setup_errors": ["the run's supervisor answered no report"]}
    return report
