"""A command as a runtime gets it (:class:`ExecSpec`), a prepared run (:class:`PreparedRun`),
and the check of the text that goes into a process (:func:`check_text`).

What the workspace, its interactive sessions and the runtimes share, so that each stands on
this module rather than on one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import WorkspaceError
from .result import STREAM_CAP_BYTES
from .staging import Snapshot, StagedSkill


@dataclass(frozen=True)
class ExecSpec:
    """One command, ready for a runtime: ``bash -lc command`` in ``cwd`` with exactly ``env``.

    ``env`` holds the command's tag (:data:`~.process.TAG_VARIABLE`).
    """

    command: str
    cwd: Path
    env: dict[str, str]
    stdin_path: Path | None
    timeout: float
    run_dir: Path
    cap: int = STREAM_CAP_BYTES


@dataclass(frozen=True)
class PreparedRun:
    """A command ready to execute: its spec, the staged skill, its run folder, and what to
    compare after it where the runtime does not guard the skill tree: ``watched`` maps
    ``"staged"`` (the workspace's copy) and ``"source"`` (the user's folder) to a snapshot."""

    spec: ExecSpec
    staged: StagedSkill
    run_dir: Path
    watched: dict[str, tuple[Path, Snapshot]]


def check_text(name: str, value: str, *, nul_allowed: bool = False) -> None:
    """Refuse text no process can be given: NUL bytes in argv/paths, lone surrogates."""
    if not nul_allowed and "\x00" in value:
        raise WorkspaceError(f"{name} must not contain NUL bytes")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise WorkspaceError(
            f"{name} is not valid Unicode text ({error.reason} at position {error.start})"
        ) from None
