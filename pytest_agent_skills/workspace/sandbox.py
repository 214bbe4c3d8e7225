"""The ``sandbox`` runtime: ``bash -lc`` inside bubblewrap.

The sandbox sees only what a command needs, read-only: the system folders
(``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/opt``, ``/sys`` and ``/etc`` without its
secrets - shadow files, SSH host keys, ``/etc/ssl/private``).  ``/home``,
``/root``, ``/var``, ``/srv``, ``/mnt`` and every other host folder are absent;
``/tmp``, ``/var/tmp`` and ``/run`` (hence ``/var/run``) are fresh tmpfs,
``/dev`` and ``/proc`` are the sandbox's own.  So no Unix socket of the host is
reachable (a read-only mount does not stop a ``connect()``, absence does): not
``/var/run/docker.sock``, not a session bus, not a socket in a home folder.  A
listening socket the kernel lists in ``/proc/net/unix`` under one of the bound
folders is covered with ``/dev/null``; abstract sockets stay behind
``--unshare-net``.

The workspace is mounted writable at its own path with ``skills/`` and
``work/inputs/`` read-only on top, and each link-staged skill source is
mounted read-only at its own path (so the staged links resolve, and nothing
can write through them, root included).  The command gets no network
(``--unshare-net``), its own PID namespace (when the command's shell ends,
every process it started dies with the namespace) and dies with its parent.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import INSTALL_BWRAP, RuntimeUnavailableError
from .globbing import is_inside
from .host import HostRuntime, find_bash
from .runtime import read_only_folders
from .spec import ExecSpec

if TYPE_CHECKING:
    from .workspace import Workspace

ISOLATION_FLAGS = (
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    "--new-session",
)
#: Host folders bound read-only when they exist (a top-level symlink is recreated as one).
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc")
#: Bound read-only too, but never searched for sockets (sysfs holds none).
KERNEL_FOLDERS = ("/sys",)
#: Secrets under /etc, hidden (files by /dev/null, folders by an empty tmpfs).
SECRET_FILES = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_*key",
)
SECRET_FOLDERS = ("/etc/ssl/private",)
#: Fresh and writable in every sandbox.
SCRATCH_MOUNTS = (
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    "--tmpfs", "/run",
    "--dir", "/var",
    "--tmpfs", "/var/tmp",
    "--symlink", "../run", "/var/run",
)  # fmt: skip


def system_mounts(root: Path = Path("/")) -> list[str]:
    """bwrap options for the read-only system folders of this machine, secrets hidden."""
    options: list[str] = []
    for folder in (*SYSTEM_FOLDERS, *KERNEL_FOLDERS):
        host = root / folder.lstrip("/")
        if host.is_symlink():
            options += ["--symlink", os.readlink(host), folder]
        elif host.is_dir():
            options += ["--ro-bind", str(host), folder]
    for pattern in SECRET_FILES:
        for secret in sorted(glob.glob(str(root / pattern.lstrip("/")))):
            if os.path.isfile(secret):
                options += ["--ro-bind", "/dev/null", "/" + os.path.relpath(secret, root)]
    for folder in SECRET_FOLDERS:
        if (root / folder.lstrip("/")).is_dir():
            options += ["--tmpfs", folder]
    return options


def bound_system_folders() -> list[str]:
    """The system folders that are folders here, not symlinks: bound as they are, so where a
    host socket could sit inside the sandbox."""
    return [
        folder for folder in SYSTEM_FOLDERS if os.path.isdir(folder) and not os.path.islink(folder)
    ]


def listening_sockets(table: Path = Path("/proc/net/unix")) -> list[str]:
    """Paths of the Unix sockets listening on this machine (as this network namespace sees them)."""
    paths = []
    try:
        lines = table.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return []
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.append(fields[7])
    return paths


def socket_masks(bound: Iterable[str], sockets: Iterable[str]) -> list[str]:
    """bwrap options covering each socket that lies under one of the ``bound`` folders."""
    folders = [Path(folder) for folder in bound]
    options: list[str] = []
    for path in sorted(set(sockets)):
        if is_inside(path, folders) and os.path.exists(path):
            options += ["--ro-bind", "/dev/null", path]
    return options


def find_bwrap() -> str:
    """The bwrap binary, checked with one probe run; raises :class:`RuntimeUnavailableError`."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeUnavailableError(
            f"the sandbox runtime needs bubblewrap ('bwrap'), not found on PATH: {INSTALL_BWRAP}"
        )
    probe = subprocess.run(
        [bwrap, *system_mounts(), *SCRATCH_MOUNTS, *ISOLATION_FLAGS, "true"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", "replace").strip() or f"exit {probe.returncode}"
        raise RuntimeUnavailableError(
            f"bubblewrap at {bwrap} cannot create a sandbox here ({detail}); it needs unprivileged"
            " user namespaces (sysctl kernel.unprivileged_userns_clone=1) or root; or choose"
            " another runtime with --skills-runtime=local|docker"
        )
    return bwrap


class SandboxRuntime(HostRuntime):
    name = "sandbox"

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.bwrap = find_bwrap()
        self.bash = find_bash()
        self.system = system_mounts()
        #: Where a host socket could sit inside the sandbox.
        self.searched = bound_system_folders()

    def base_argv(self) -> list[str]:
        """bwrap with the system folders, scratch mounts and namespaces (the bench's floor)."""
        return [self.bwrap, *self.system, *SCRATCH_MOUNTS, *ISOLATION_FLAGS]

    def argv(self, workspace: Workspace, spec: ExecSpec) -> list[str]:
        layout = workspace.layout
        argv = [
            self.bwrap,
            *self.system,
            *SCRATCH_MOUNTS,
            "--bind",
            str(layout.root),
            str(layout.root),
        ]
        for folder in read_only_folders(workspace):
            argv += ["--ro-bind", str(folder), str(folder)]
        sources = [str(staged.source) for staged in workspace.link_staged]
        argv += socket_masks([*self.searched, *sources], listening_sockets())
        argv += [*ISOLATION_FLAGS, "--chdir", str(spec.cwd), "--", self.bash, "-lc", spec.command]
        return argv
