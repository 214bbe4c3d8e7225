"""Workspaces and command runs for skills: layout, staging, results, and three runtimes.

    runtime = create_runtime("local" | "sandbox" | "docker", work_root=..., image=...)
    with runtime.create_workspace("session-1") as ws:
        result = ws.run(skill, "python3 scripts/make.py", output_files=["out/*.txt"])
        session = ws.exec(skill, "python3 scripts/ask.py")   # interactive: poll / write / kill

See ``docs/workspace.md``.  Nothing here imports pytest; the classes are
imported on first use (so the pytest plugin stays cheap to load) and the
Docker SDK only when a docker runtime is created.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_exports
from .errors import RuntimeUnavailableError as RuntimeUnavailableError
from .errors import StagingError as StagingError
from .errors import WorkspaceError as WorkspaceError
from .errors import WorkspacePathError as WorkspacePathError
from .names import DEFAULT_DOCKER_IMAGE as DEFAULT_DOCKER_IMAGE
from .names import RUNTIME_NAMES as RUNTIME_NAMES
from .names import STAGE_MODES as STAGE_MODES

if TYPE_CHECKING:  # the lazy names' own types, for type checkers
    from .interactive import ExecChunk as ExecChunk
    from .interactive import ExecSession as ExecSession
    from .interactive import Interaction as Interaction
    from .interactive import UnknownSessionError as UnknownSessionError
    from .removal import RemovalError as RemovalError
    from .requests import ExecRequest as ExecRequest
    from .requests import RunRequest as RunRequest
    from .result import ARTIFACT_CAP_BYTES as ARTIFACT_CAP_BYTES
    from .result import DEFAULT_TIMEOUT_SECONDS as DEFAULT_TIMEOUT_SECONDS
    from .result import INLINE_FILE_CAP_BYTES as INLINE_FILE_CAP_BYTES
    from .result import INLINE_TOTAL_CAP_BYTES as INLINE_TOTAL_CAP_BYTES
    from .result import MAX_OUTPUT_FILES as MAX_OUTPUT_FILES
    from .result import STREAM_CAP_BYTES as STREAM_CAP_BYTES
    from .result import ArtifactFile as ArtifactFile
    from .result import OutputFile as OutputFile
    from .result import RunResult as RunResult
    from .runtime import Runtime as Runtime
    from .spec import ExecSpec as ExecSpec
    from .staging import StagedSkill as StagedSkill
    from .workspace import Workspace as Workspace

#: Public name -> submodule defining it, imported on first use.
_LAZY = {
    "ExecChunk": "interactive",
    "ExecSession": "interactive",
    "Interaction": "interactive",
    "UnknownSessionError": "interactive",
    "RemovalError": "removal",
    "ExecRequest": "requests",
    "RunRequest": "requests",
    "ExecSpec": "spec",
    "Runtime": "runtime",
    "Workspace": "workspace",
    "ArtifactFile": "result",
    "OutputFile": "result",
    "RunResult": "result",
    "ARTIFACT_CAP_BYTES": "result",
    "DEFAULT_TIMEOUT_SECONDS": "result",
    "INLINE_FILE_CAP_BYTES": "result",
    "INLINE_TOTAL_CAP_BYTES": "result",
    "MAX_OUTPUT_FILES": "result",
    "STREAM_CAP_BYTES": "result",
    "StagedSkill": "staging",
}

__all__ = sorted(
    [
        *_LAZY,
        "DEFAULT_DOCKER_IMAGE",
        "RUNTIME_NAMES",
        "STAGE_MODES",
        "RuntimeUnavailableError",
        "StagingError",
        "WorkspaceError",
        "WorkspacePathError",
        "create_runtime",
    ]
)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


def create_runtime(
    kind: str,
    *,
    work_root: Path | None = None,
    image: str | None = None,
    stage_mode: str = "link",
    keep_workspaces: bool = False,
) -> Runtime:
    """A runtime by name; raises :class:`RuntimeUnavailableError` when its engine is missing."""
    options: dict[str, Any] = {
        "work_root": work_root,
        "stage_mode": stage_mode,
        "keep_workspaces": keep_workspaces,
    }
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
