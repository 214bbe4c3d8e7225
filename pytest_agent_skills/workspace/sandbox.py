"""The ``sandbox`` runtime: ``bash -lc`` inside bubblewrap.

The host root is mounted read-only, ``/tmp`` is a fresh tmpfs, the workspace
is mounted writable at its own path with ``skills/`` and ``work/inputs/``
read-only on top, and each link-staged skill source is mounted read-only at
its own path (so the staged links resolve, and nothing can write through
them, root included).  The command gets no network (``--unshare-net``), its
own PID namespace (when the command's shell ends, every process it started
dies with the namespace) and dies with its parent.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING

from .errors import INSTALL_BWRAP, RuntimeUnavailableError
from .local import find_bash, run_on_host
from .process import ProcessOutcome
from .runtime import ExecSpec, Runtime, read_only_folders

if TYPE_CHECKING:
    from .interactive import InteractiveProcess, OutputStream
    from .workspace import Workspace

ISOLATION_FLAGS = (
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    "--new-session",
)
BASE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")


def find_bwrap() -> str:
    """The bwrap binary, checked with one probe run; raises :class:`RuntimeUnavailableError`."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeUnavailableError(
            f"the sandbox runtime needs bubblewrap ('bwrap'), not found on PATH: {INSTALL_BWRAP}"
        )
    probe = subprocess.run(
        [bwrap, *BASE_MOUNTS, *ISOLATION_FLAGS, "true"],
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


class SandboxRuntime(Runtime):
    name = "sandbox"

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.bwrap = find_bwrap()
        self.bash = find_bash()

    def argv(self, workspace: Workspace, spec: ExecSpec) -> list[str]:
        layout = workspace.layout
        argv = [self.bwrap, *BASE_MOUNTS, "--bind", str(layout.root), str(layout.root)]
        for folder in read_only_folders(workspace):
            argv += ["--ro-bind", str(folder), str(folder)]
        argv += [*ISOLATION_FLAGS, "--chdir", str(spec.cwd), "--", self.bash, "-lc", spec.command]
        return argv

    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        return run_on_host(self.argv(workspace, spec), spec)

    def start_interactive(
        self, workspace: Workspace, spec: ExecSpec, stream: OutputStream, *, tty: bool
    ) -> InteractiveProcess:
        from .interactive_host import HostProcess

        return HostProcess(self.argv(workspace, spec), spec, stream, tty=tty)
