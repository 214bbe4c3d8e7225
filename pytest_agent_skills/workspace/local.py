"""The ``local`` runtime: ``bash -lc`` as a process of this machine.

Not a sandbox: the command runs as the test process's user and sees the host
file system and network.  What it does guarantee:

- the skill is staged by copy, so a command that writes, deletes or renames
  in its skill folder changes the workspace's copy, never the user's files
  (a change is still reported; see :mod:`.staging`);
- the clean environment, ``HOME`` in the workspace, stdin never inherited,
  bounded output;
- no process of the command outlives its run (or the workspace).

Where ``unshare`` can make namespaces (root, or unprivileged user namespaces),
each command runs in its own PID and mount namespaces with a private ``/proc``,
and the own folder of every skill staged in the workspace is hidden behind an
empty read-only tmpfs (the command works on the copy): the kernel kills every
process it started when its shell ends, it cannot see the test process or read
its environment through ``/proc/<pid>/environ``, and it cannot write into a
skill's folder even by its host path (as a normal user it keeps no capability
to undo the mount; root can, on purpose).  The whole set-up is one step: one
``unshare`` whose first process makes every mount with a single ``mount -a``
(see :class:`Namespaces`).

The host's mounts are never copied one by one: the kernel copies the whole
mount tree into the new namespace at once and makes it private in one
recursive call, and the only mounts made afterwards are new ones over the
skill folders.  So a host mount that comes or goes meanwhile (Docker mounts an
overlay for every container it starts, autofs, any transient mount) cannot fail
a run.  Bubblewrap is not used here for that reason: ``bwrap --bind / /`` binds
recursively and then remounts every submount it read from the mount table, and
fails when one has vanished in between (a known, open bubblewrap race).
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..excerpt import excerpt
from .errors import RuntimeUnavailableError, WorkspaceError
from .host import HostRuntime, find_bash
from .process import ProcessOutcome
from .spec import ExecSpec

if TYPE_CHECKING:
    from .workspace import Workspace

#: ``unshare`` options: own PID and mount namespaces, a private /proc, killed with ``unshare``.
PID_NAMESPACE = ("--pid", "--fork", "--kill-child", "--mount-proc")
#: Added for a user that is not root: an unprivileged user namespace that keeps the uid (and,
#: until the command starts, the capabilities the read-only mounts need).
USER_NAMESPACE = ("--user", "--map-current-user", "--keep-caps")
#: What the command gets as a normal user: no capability left in its user namespace, so it
#: cannot undo the read-only mounts, and ``no_new_privs``: a setuid bit or a file capability
#: grants nothing either.
DROP_CAPABILITIES = (
    "--inh-caps=-all",
    "--ambient-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
)
#: The first process of an ``unshare`` namespace (``sh -c INIT skills-init FSTAB COMMAND...``):
#: one ``mount -a`` hides every skill's own folder behind an empty read-only tmpfs (FSTAB lists
#: them; a new mount, so no flag of the folder's own mount has to be kept), then it runs the
#: command (not as PID 1).
MOUNT_FAILED_STATUS = 125
MOUNT_FAILED = "pytest-agent-skills: cannot hide the skill folders"
INIT = """if [ -n "$1" ]; then
  {mount} -a -T "$1" || {{ echo "{failed}" >&2; exit {status}; }}
fi
shift
"$@"; exit $?"""
#: The FSTAB that ``INIT`` reads, written into the run's folder (``mount`` cannot read a pipe).
FSTAB_NAME = ".hidden-folders.fstab"
#: The run's folder is new: the FSTAB is a new file there (never a link followed).
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

_NAMESPACES: dict[int, Namespaces | None] = {}


@dataclass(frozen=True)
class Namespaces:
    """How to run a command in its own PID and mount namespaces, skill folders hidden, in one
    step: ``unshare`` with one ``sh`` whose single ``mount -a`` reads every folder from an
    fstab."""

    tool: str
    prefix: tuple[str, ...]
    drop: tuple[str, ...]

    def argv(self, hidden: list[str], command: list[str], scratch: Path) -> list[str]:
        """``command`` with the folders ``hidden``; ``unshare`` writes its fstab in ``scratch``."""
        table = ""
        if hidden:
            table = f"{scratch}/{FSTAB_NAME}"
            handle = os.open(table, _NEW_FILE, 0o600)
            try:
                os.write(handle, fstab(hidden).encode())
            finally:
                os.close(handle)
        return [*self.prefix, table, *self.drop, *command]

    def failed(self, exit_code: int, stderr: bytes) -> bool:
        """Whether a run ended because the namespace could not be set up (not the command)."""
        return exit_code == MOUNT_FAILED_STATUS and MOUNT_FAILED.encode() in stderr


def fstab(folders: list[str]) -> str:
    """fstab lines mounting an empty read-only tmpfs on each folder (blanks escaped)."""
    return "".join(
        f"skill-folder-hidden {_fstab_field(folder)} tmpfs ro,size=4k,mode=0555 0 0\n"
        for folder in folders
    )


def _fstab_field(text: str) -> str:
    return "".join(f"\\{ord(char):03o}" if char in " \t\n\\" else char for char in text)


def _init(mount: str) -> str:
    return INIT.format(mount=shlex.quote(mount), failed=MOUNT_FAILED, status=MOUNT_FAILED_STATUS)


#: The tools that can set the namespaces up, in the order they are tried.
NAMESPACE_TOOLS = ("unshare",)
#: Why ``isolate="bwrap"`` is refused.
NO_BWRAP = (
    "isolate='bwrap': the local runtime does not use bubblewrap, whose 'bwrap --bind / /'"
    " fails a run when a host mount vanishes while it copies them (Docker's container"
    " mounts, autofs); its namespaces come from 'unshare': choose True (or 'unshare'),"
    " None or False"
)


def namespaces() -> Namespaces | None:
    """The namespaces this process can make with ``unshare`` (of util-linux 2.38+, the one of
    :data:`NAMESPACE_TOOLS`), probed once per user; ``None`` when it cannot (no root, no user
    namespaces)."""
    uid = os.geteuid()
    if uid not in _NAMESPACES:
        _NAMESPACES[uid] = _probe(_with_unshare(uid))
    return _NAMESPACES[uid]


def _with_unshare(uid: int) -> Namespaces | None:
    unshare, shell, mount = (shutil.which(name) for name in ("unshare", "sh", "mount"))
    setpriv = shutil.which("setpriv")
    if not (unshare and shell and mount and (setpriv or uid == 0)):
        return None
    user = USER_NAMESPACE if uid != 0 else ()
    return Namespaces(
        "unshare",
        prefix=(unshare, *user, *PID_NAMESPACE, shell, "-c", _init(mount), "skills-init"),
        drop=(setpriv, *DROP_CAPABILITIES) if user and setpriv else (),
    )


def _probe(found: Namespaces | None) -> Namespaces | None:
    """``found`` if a command run through it cannot write into a hidden folder (two of them,
    one with a blank in its name) and runs in a PID namespace of its own."""
    if found is None:
        return None
    with tempfile.TemporaryDirectory(prefix="skills-probe-") as folder:
        hidden = [os.path.join(folder, "a"), os.path.join(folder, "b c")]
        for path in hidden:
            os.mkdir(path)
        check = 'for f in "$@"; do ! touch "$f/written" 2>/dev/null || exit 1; done; [ $$ != 1 ]'
        try:
            probe = subprocess.run(
                found.argv(hidden, ["sh", "-c", check, "probe", *hidden], Path(folder)),
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

    def __init__(self, *, isolate: bool | str | None = None, **options: Any) -> None:
        """``isolate``: ``None`` uses a PID namespace when possible, ``True`` (or ``"unshare"``,
        the tool that makes it) requires one, ``False`` never uses one (process group and tag
        sweep only)."""
        super().__init__(**options)
        self.bash = find_bash()
        if isolate == "bwrap":
            raise WorkspaceError(NO_BWRAP)
        if isinstance(isolate, str) and isolate not in NAMESPACE_TOOLS:
            raise WorkspaceError(
                f"isolate={excerpt(isolate)}: choose a tool from {', '.join(NAMESPACE_TOOLS)},"
                " or True, False or None"
            )
        tool = isolate if isinstance(isolate, str) else ""
        self.namespaces = None if isolate is False else namespaces()
        if isolate and self.namespaces is None:
            raise RuntimeUnavailableError(
                "the local runtime cannot put commands in their own namespaces here:"
                " 'unshare --user --map-current-user --keep-caps --pid --mount-proc'"
                " (util-linux 2.38+) does not work, it needs root or unprivileged user"
                " namespaces; use the sandbox runtime for isolation"
                if not tool
                else f"the local runtime cannot put commands in their own namespaces with {tool}"
                " here (is it installed? root or unprivileged user namespaces are needed)"
            )
        self.sweep = self.namespaces is None

    @property
    def isolation(self) -> str:
        """``"pid-namespace"`` or ``"process-group"`` (see the module documentation)."""
        return "process-group" if self.namespaces is None else "pid-namespace"

    @property
    def isolation_tool(self) -> str:
        """What sets the namespaces up: ``"unshare"``, or ``""`` without them."""
        return "" if self.namespaces is None else self.namespaces.tool

    def argv(self, workspace: Workspace, spec: ExecSpec) -> list[str]:
        command = [self.bash, "-lc", spec.command]
        if self.namespaces is None:
            return command
        # A skill folder that holds the workspace cannot be hidden (writes there are reported).
        root = workspace.path.resolve()
        sources = {staged.source for staged in workspace.staged.values()}
        hidden = sorted(
            str(source)
            for source in sources
            if not root.is_relative_to(source) and os.path.isdir(source)
        )
        return self.namespaces.argv(hidden, command, spec.run_dir)

    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        outcome = super().execute(workspace, spec)
        failed = outcome.stderr.data()
        if self.namespaces is not None and self.namespaces.failed(outcome.exit_code, failed):
            raise WorkspaceError(
                "the local runtime could not hide the skill folders from the command:"
                f" {failed.decode('utf-8', 'replace').strip()}"
            )
        return outcome
