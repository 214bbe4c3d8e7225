"""The runtime interface: a :class:`Runtime` executes one prepared command (:class:`ExecSpec`).

A runtime only knows how to run ``bash -lc COMMAND`` - on the host, in
bubblewrap or in a Docker container, to completion or interactively - and how
to release what it holds for a workspace; everything else (layout, staging,
environment, outputs, the result) belongs to
:class:`~pytest_agent_skills.workspace.workspace.Workspace`.  Whatever a
command starts dies with it (see :mod:`.process`): when its shell ends, at its
timeout, and when the workspace closes (``workspace.processes`` for runs,
``workspace.exec_sessions`` for interactive sessions).
Paths are the same inside and outside every runtime (the sandbox and the
container mount the workspace at its host path), so ``$WORKSPACE_DIR`` and
output names never differ.
"""

from __future__ import annotations

import tempfile
import threading
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from .errors import run_all
from .layout import workspace_dir_name
from .process import ProcessOutcome
from .spec import ExecSpec
from .staging import check_stage_mode

if TYPE_CHECKING:
    from .interactive import InteractiveProcess, OutputStream
    from .workspace import Workspace


def read_only_folders(workspace: Workspace) -> list[Path]:
    """What ``sandbox`` and ``docker`` mount read-only over the writable workspace.

    ``skills/``, ``work/inputs/`` and, each at its own path, the source of a
    link-staged skill (so the staged links resolve and nothing writes through them).
    """
    layout = workspace.layout
    return [layout.skills, layout.inputs, *(staged.source for staged in workspace.link_staged)]


class Runtime(ABC):
    """Creates workspaces and executes their commands (one engine: host, bwrap or Docker)."""

    name: ClassVar[str]
    #: False when the runtime cannot stop a command writing into the skill tree (then every run
    #: compares the tree before and after and reports changes).
    guards_skill_tree: ClassVar[bool] = True
    #: True when the runtime stages every skill by copy, whatever ``stage_mode`` says (its
    #: commands could write through links into the user's skill folder).
    copies_skills: ClassVar[bool] = False

    def __init__(
        self,
        *,
        work_root: Path | None = None,
        stage_mode: str = "link",
        keep_workspaces: bool = False,
    ) -> None:
        check_stage_mode(stage_mode)
        root = Path(work_root) if work_root is not None else Path(tempfile.gettempdir())
        root.mkdir(parents=True, exist_ok=True)
        self.work_root = root.resolve()
        self.stage_mode = stage_mode
        self.keep_workspaces = keep_workspaces
        self._open: list[Workspace] = []
        self._lock = threading.Lock()

    def create_workspace(self, session_id: str, *, defer_metadata: bool = False) -> Workspace:
        """A new workspace; ``defer_metadata``: see :class:`~.workspace.Workspace`."""
        path = self.work_root / workspace_dir_name(session_id, time.time_ns())
        path.mkdir()
        from .workspace import Workspace

        workspace = Workspace(self, path, session_id, defer_metadata=defer_metadata)
        with self._lock:
            self._open.append(workspace)
        return workspace

    @abstractmethod
    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        """Run ``spec`` to its end (or timeout); never raises for a failing or timed-out command.

        Registers what it runs in ``workspace.processes`` (so closing the
        workspace kills it); every process the command started is dead when
        this returns.
        """

    @abstractmethod
    def start_interactive(
        self, workspace: Workspace, spec: ExecSpec, stream: OutputStream, *, tty: bool
    ) -> InteractiveProcess:
        """Start ``spec`` with its stdin open, its output going to ``stream`` (``skill_exec``)."""

    def release(self, workspace: Workspace) -> None:  # noqa: B027 - optional hook
        """Free what the runtime holds for ``workspace`` (a container, ...)."""

    def forget(self, workspace: Workspace) -> None:
        with self._lock:
            if workspace in self._open:
                self._open.remove(workspace)

    def close(self) -> None:
        """Close every workspace still open; the first that fails (a folder that could not be
        removed whole, ...) is raised once all are closed."""
        run_all(workspace.close for workspace in list(self._open))

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
