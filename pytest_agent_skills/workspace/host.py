"""What the ``local`` and ``sandbox`` runtimes share: commands are processes of this machine.

A subclass says how to wrap ``bash -lc COMMAND`` (:meth:`HostRuntime.argv`)
and whether a command's processes need the ``/proc`` tag sweep to be found
(``sweep``: no PID namespace holds them); starting, capturing output, the
timeout and the kill of the whole tree are here, for runs and for
interactive sessions alike.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from abc import abstractmethod
from typing import TYPE_CHECKING

from .errors import RuntimeUnavailableError
from .process import HostProcessTree, ProcessOutcome
from .runtime import Runtime
from .spec import ExecSpec

if TYPE_CHECKING:
    from .interactive import InteractiveProcess, OutputStream
    from .workspace import Workspace


def find_bash() -> str:
    bash = shutil.which("bash")
    if bash is None:
        raise RuntimeUnavailableError(
            "bash is not on PATH; skill commands run as 'bash -lc COMMAND' (install bash)"
        )
    return bash


class HostRuntime(Runtime):
    #: True when no PID namespace holds a command's processes (then a kill sweeps ``/proc``).
    sweep: bool = False

    @abstractmethod
    def argv(self, workspace: Workspace, spec: ExecSpec) -> list[str]:
        """The host command line that runs ``bash -lc spec.command`` in this runtime."""

    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        argv = self.argv(workspace, spec)
        # Pipes for stdout and stderr; stdin is the run's file, or empty.
        with (
            open(spec.stdin_path, "rb")
            if spec.stdin_path is not None
            else contextlib.nullcontext(subprocess.DEVNULL)
        ) as stdin:
            tree = HostProcessTree.start(
                argv,
                cwd=spec.cwd,
                env=spec.env,
                sweep=self.sweep,
                stdin=stdin,
                output=subprocess.PIPE,
            )
        workspace.processes.add(tree)
        try:
            return tree.collect(timeout=spec.timeout, cap=spec.cap)
        finally:
            tree.kill()
            workspace.processes.discard(tree)

    def start_interactive(
        self, workspace: Workspace, spec: ExecSpec, stream: OutputStream, *, tty: bool
    ) -> InteractiveProcess:
        from .interactive_host import HostProcess

        return HostProcess(self.argv(workspace, spec), spec, stream, tty=tty, sweep=self.sweep)
