"""The ``local`` runtime: ``bash -lc`` as a host subprocess.

Not a sandbox: the command runs with the test process's user and sees the
host file system and network.  What it does guarantee: the clean environment,
``HOME`` in the workspace, stdin never inherited, bounded output, a timeout
that kills the whole process group, and a report of every change the command
made to the skill tree (link staging points into the skill's source; as a
non-root user the staged tree is also ``chmod a-w``).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import RuntimeUnavailableError
from .process import ProcessOutcome, run_process
from .runtime import ExecSpec, Runtime

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


class LocalRuntime(Runtime):
    name = "local"
    guards_skill_tree = False

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.bash = find_bash()

    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        return run_on_host([self.bash, "-lc", spec.command], spec)

    def start_interactive(
        self, workspace: Workspace, spec: ExecSpec, stream: OutputStream, *, tty: bool
    ) -> InteractiveProcess:
        from .interactive_host import HostProcess

        return HostProcess([self.bash, "-lc", spec.command], spec, stream, tty=tty)


def run_on_host(argv: Sequence[str], spec: ExecSpec) -> ProcessOutcome:
    """Run ``argv`` (which runs ``spec.command``) as a host process with ``spec``'s settings."""
    return run_process(
        argv,
        cwd=spec.cwd,
        env=spec.env,
        stdin_path=spec.stdin_path,
        timeout=spec.timeout,
        cap=spec.cap,
    )
