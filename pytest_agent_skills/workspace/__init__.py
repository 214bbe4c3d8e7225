"""Workspaces and command runs for skills: layout, staging, results, and three runtimes.

    runtime = create_runtime("local" | "sandbox" | "docker", work_root=..., image=...)
    with runtime.create_workspace("session-1") as ws:
        result = ws.run(skill, "python3 scripts/make.py", output_files=["out/*.txt"])

See ``docs/workspace.md``.  Nothing here imports pytest; the Docker SDK is
imported only when a docker runtime is created.
"""

from __future__ import annotations

from pathlib import Path

from .base import ExecSpec, Runtime, Workspace
from .docker_runtime import DEFAULT_DOCKER_IMAGE
from .errors import RuntimeUnavailableError, StagingError, WorkspaceError, WorkspacePathError
from .result import (
    DEFAULT_TIMEOUT_SECONDS,
    INLINE_FILE_CAP_BYTES,
    INLINE_TOTAL_CAP_BYTES,
    MAX_OUTPUT_FILES,
    STREAM_CAP_BYTES,
    ArtifactFile,
    OutputFile,
    RunResult,
)
from .staging import STAGE_MODES, StagedSkill

RUNTIME_NAMES = ("local", "sandbox", "docker")

__all__ = [
    "DEFAULT_DOCKER_IMAGE",
    "DEFAULT_TIMEOUT_SECONDS",
    "INLINE_FILE_CAP_BYTES",
    "INLINE_TOTAL_CAP_BYTES",
    "MAX_OUTPUT_FILES",
    "RUNTIME_NAMES",
    "STAGE_MODES",
    "STREAM_CAP_BYTES",
    "ArtifactFile",
    "ExecSpec",
    "OutputFile",
    "RunResult",
    "Runtime",
    "RuntimeUnavailableError",
    "StagedSkill",
    "StagingError",
    "Workspace",
    "WorkspaceError",
    "WorkspacePathError",
    "create_runtime",
]


def create_runtime(
    kind: str,
    *,
    work_root: Path | None = None,
    image: str | None = None,
    stage_mode: str = "link",
    keep_workspaces: bool = False,
) -> Runtime:
    """A runtime by name; raises :class:`RuntimeUnavailableError` when its engine is missing."""
    options = {"work_root": work_root, "stage_mode": stage_mode, "keep_workspaces": keep_workspaces}
    if kind == "local":
        from .local import LocalRuntime

        return LocalRuntime(**options)
    if kind == "sandbox":
        from .sandbox import SandboxRuntime

        return SandboxRuntime(**options)
    if kind == "docker":
        from .docker_runtime import DockerRuntime

        return DockerRuntime(image=image, **options)
    raise WorkspaceError(f"unknown runtime {kind!r} (choose from {', '.join(RUNTIME_NAMES)})")
