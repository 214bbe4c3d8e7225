"""The ``local`` runtime: ``bash -lc`` as a process of this machine.

Not a sandbox: the command runs as the test process's user and sees the host
file system and network.  What it does guarantee:

- the skill is staged by copy, so a command that writes, deletes or renames
  in its skill folder changes the workspace's copy, never the user's files
  (a change is still reported; see :mod:`.staging`);
- the clean environment, ``HOME`` in the workspace, stdin never inherited,
  bounded output;
- no process of the command outlives its run (or the workspace).

Where ``unshare`` can make namespaces (root, or unprivileged user
namespaces), each command runs in its own PID namespace with a private
``/proc``: the kernel kills every process it started when its shell ends, and
it cannot see the test process or read its environment through
``/proc/<pid>/environ``.  Otherwise (``isolation == "process-group"``) the
kill covers the process group and sweeps ``/proc`` for the command's tag,
and a command can read the environment of every process of the same user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

from .errors import RuntimeUnavailableError
from .host import HostRuntime, find_bash
from .runtime import ExecSpec

if TYPE_CHECKING:
    from .workspace import Workspace

#: ``unshare`` options: own PID and mount namespaces, a private /proc, killed with ``unshare``.
PID_NAMESPACE = ("--pid", "--fork", "--kill-child", "--mount-proc")
#: Added for a user that is not root: an unprivileged user namespace that keeps the uid.
USER_NAMESPACE = ("--user", "--map-current-user")
#: The first process of the namespace: a ``sh`` that runs the command, so it is not PID 1.
INIT = ("-c", '"$@"; exit $?', "skills-init")

_NAMESPACE_PREFIX: dict[int, list[str] | None] = {}


def namespace_prefix() -> list[str] | None:
    """The ``unshare ... sh -c`` prefix that puts a command in its own PID namespace, if possible.

    Probed once per process and user: ``None`` when ``unshare`` is missing or
    the kernel refuses (no root, and unprivileged user namespaces disabled).
    """
    uid = os.geteuid()
    if uid not in _NAMESPACE_PREFIX:
        _NAMESPACE_PREFIX[uid] = _probe_namespaces(uid)
    return _NAMESPACE_PREFIX[uid]


def _probe_namespaces(uid: int) -> list[str] | None:
    unshare, shell = shutil.which("unshare"), shutil.which("sh")
    if unshare is None or shell is None:
        return None
    prefix = [unshare, *(USER_NAMESPACE if uid != 0 else ()), *PID_NAMESPACE, shell, *INIT]
    try:
        probe = subprocess.run(
            [*prefix, "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return prefix if probe.returncode == 0 else None


class LocalRuntime(HostRuntime):
    name = "local"
    guards_skill_tree = False
    copies_skills = True

    def __init__(self, *, isolate: bool | None = None, **options: Any) -> None:
        """``isolate``: ``None`` uses a PID namespace when possible, ``True`` requires one,
        ``False`` never uses one (process group and tag sweep only)."""
        super().__init__(**options)
        self.bash = find_bash()
        self.prefix = None if isolate is False else namespace_prefix()
        if isolate and self.prefix is None:
            raise RuntimeUnavailableError(
                "the local runtime cannot put commands in their own PID namespace here: 'unshare"
                " --user --map-current-user --pid' fails (util-linux 2.38+ and root or unprivileged"
                " user namespaces are needed); use the sandbox runtime for isolation"
            )
        self.sweep = self.prefix is None

    @property
    def isolation(self) -> str:
        """``"pid-namespace"`` or ``"process-group"`` (see the module documentation)."""
        return "process-group" if self.prefix is None else "pid-namespace"

    def argv(self, workspace: Workspace, spec: ExecSpec) -> list[str]:
        return [*(self.prefix or ()), self.bash, "-lc", spec.command]
