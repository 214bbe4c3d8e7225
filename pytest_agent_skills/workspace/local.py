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
namespaces), each command runs in its own PID and mount namespaces with a
private ``/proc``, and the own folder of every skill staged in the workspace
is hidden behind an empty read-only tmpfs (the command works on the copy):
the kernel kills every process it started when its shell ends, it cannot see
the test process or read its environment through ``/proc/<pid>/environ``,
and it cannot write into a skill's folder even by its host path (as a normal
user it keeps no capability to undo the mount; root can, on purpose).
Otherwise (``isolation == "process-group"``) the kill covers the process
group and sweeps ``/proc`` for the command's tag, a command can read the
environment of every process of the same user, and a write to a skill
folder's host path is reported, not prevented.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import RuntimeUnavailableError, WorkspaceError
from .host import HostRuntime, find_bash
from .process import ProcessOutcome
from .runtime import ExecSpec

if TYPE_CHECKING:
    from .workspace import Workspace

#: ``unshare`` options: own PID and mount namespaces, a private /proc, killed with ``unshare``.
PID_NAMESPACE = ("--pid", "--fork", "--kill-child", "--mount-proc")
#: Added for a user that is not root: an unprivileged user namespace that keeps the uid (and,
#: until the command starts, the capabilities the read-only mounts need).
USER_NAMESPACE = ("--user", "--map-current-user", "--keep-caps")
#: What the command gets as a normal user: no capability left in its user namespace, so it
#: cannot undo the read-only mounts.
DROP_CAPABILITIES = ("--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--")
#: The first process of the namespace (``sh -c INIT skills-init FOLDER... -- COMMAND...``): it
#: hides each skill's own folder behind an empty read-only tmpfs (the command works on the
#: workspace's copy; a new mount, so no flag of the folder's own mount has to be kept), then
#: runs the command (not as PID 1).
MOUNT_FAILED_STATUS = 125
MOUNT_FAILED = "pytest-agent-skills: cannot hide the skill folder:"
INIT = """while [ "$1" != -- ]; do
  {mount} -t tmpfs -o ro,size=4k,mode=0555 skill-folder-hidden "$1" \\
    || {{ echo "{failed} $1" >&2; exit {status}; }}
  shift
done
shift
"$@"; exit $?"""

_NAMESPACES: dict[int, Namespaces | None] = {}


@dataclass(frozen=True)
class Namespaces:
    """How to run a command in its own PID and mount namespaces, skill folders hidden."""

    prefix: tuple[str, ...]
    drop: tuple[str, ...]

    def argv(self, protected: list[str], command: list[str]) -> list[str]:
        return [*self.prefix, *protected, "--", *self.drop, *command]


def _init(mount: str) -> str:
    return INIT.format(mount=shlex.quote(mount), failed=MOUNT_FAILED, status=MOUNT_FAILED_STATUS)


def namespaces() -> Namespaces | None:
    """The namespaces this process can make, probed once per user: ``None`` when ``unshare``
    (util-linux 2.38+) is missing or the kernel refuses (no root, no user namespaces)."""
    uid = os.geteuid()
    if uid not in _NAMESPACES:
        _NAMESPACES[uid] = _probe(uid)
    return _NAMESPACES[uid]


def _probe(uid: int) -> Namespaces | None:
    unshare, shell, mount = (shutil.which(name) for name in ("unshare", "sh", "mount"))
    setpriv = shutil.which("setpriv")
    if not (unshare and shell and mount and (setpriv or uid == 0)):
        return None
    user = USER_NAMESPACE if uid != 0 else ()
    found = Namespaces(
        prefix=(unshare, *user, *PID_NAMESPACE, shell, "-c", _init(mount), "skills-init"),
        drop=(setpriv, *DROP_CAPABILITIES) if user and setpriv else (),
    )
    with tempfile.TemporaryDirectory(prefix="skills-probe-") as folder:
        try:
            probe = subprocess.run(
                found.argv([folder], ["sh", "-c", f'! touch "{folder}/written" 2>/dev/null']),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return found if probe.returncode == 0 else None


class LocalRuntime(HostRuntime):
    name = "local"
    guards_skill_tree = False
    copies_skills = True

    def __init__(self, *, isolate: bool | None = None, **options: Any) -> None:
        """``isolate``: ``None`` uses a PID namespace when possible, ``True`` requires one,
        ``False`` never uses one (process group and tag sweep only)."""
        super().__init__(**options)
        self.bash = find_bash()
        self.namespaces = None if isolate is False else namespaces()
        if isolate and self.namespaces is None:
            raise RuntimeUnavailableError(
                "the local runtime cannot put commands in their own namespaces here: 'unshare"
                " --user --map-current-user --keep-caps --pid --mount-proc' fails (util-linux"
                " 2.38+ and root or unprivileged user namespaces are needed); use the sandbox"
                " runtime for isolation"
            )
        self.sweep = self.namespaces is None

    @property
    def isolation(self) -> str:
        """``"pid-namespace"`` or ``"process-group"`` (see the module documentation)."""
        return "process-group" if self.namespaces is None else "pid-namespace"

    def argv(self, workspace: Workspace, spec: ExecSpec) -> list[str]:
        command = [self.bash, "-lc", spec.command]
        if self.namespaces is None:
            return command
        # A skill folder that holds the workspace cannot be hidden (writes there are reported).
        root = workspace.path.resolve()
        sources = {staged.source for staged in workspace.staged.values()}
        hidden = sorted(str(source) for source in sources if not root.is_relative_to(source))
        return self.namespaces.argv(hidden, command)

    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        outcome = super().execute(workspace, spec)
        failed = outcome.stderr.data()
        if outcome.exit_code == MOUNT_FAILED_STATUS and MOUNT_FAILED.encode() in failed:
            raise WorkspaceError(
                "the local runtime could not hide the skill folders from the command:"
                f" {failed.decode('utf-8', 'replace').strip()}"
            )
        return outcome
