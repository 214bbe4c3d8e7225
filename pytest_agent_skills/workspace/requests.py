"""What a command runs with, beside its skill and its command line: :class:`RunRequest` (and
:class:`ExecRequest` for an interactive session), one frozen value each; the checks of what a
request names (its timeout, its output patterns, the names of inputs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TypedDict

from ..excerpt import excerpt
from .errors import WorkspaceError, WorkspacePathError
from .result import DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS
from .spec import check_text


@dataclass(frozen=True)
class RunRequest:
    """``Workspace.run(skill, command, request)``, or each field as a keyword."""

    #: Glob patterns of the files to collect after the command, relative to the workspace.
    output_files: Sequence[str] = ()
    #: Variables added to the command's environment.
    env: Mapping[str, str] | None = None
    #: Seconds the command may take (None: the default).
    timeout: float | None = None
    stdin: str | bytes = ""
    #: Keep the collected files as artifacts too.
    save_as_artifacts: bool = False
    #: Leave the files' content out of the result (with ``save_as_artifacts``).
    omit_inline_content: bool = False
    #: The folder to run in, relative to the staged skill.
    cwd: str = ""


@dataclass(frozen=True)
class ExecRequest(RunRequest):
    """``Workspace.exec(skill, command, request)``, or each field as a keyword."""

    #: Run the command on a pseudo-terminal.
    tty: bool = False


class RunRequestFields(TypedDict, total=False):
    """The fields of :class:`RunRequest`, as keywords of ``Workspace.run``."""

    output_files: Sequence[str]
    env: Mapping[str, str] | None
    timeout: float | None
    stdin: str | bytes
    save_as_artifacts: bool
    omit_inline_content: bool
    cwd: str


class ExecRequestFields(RunRequestFields, total=False):
    """The fields of :class:`ExecRequest`, as keywords of ``Workspace.exec``."""

    tty: bool


@dataclass(frozen=True)
class OutputCollection:
    """What to do with the output files once the process exits (as ``run`` does)."""

    output_files: tuple[str, ...]
    save_as_artifacts: bool
    omit_inline_content: bool


def output_collection(request: RunRequest | ExecRequest) -> OutputCollection:
    """The output files to collect after a run, and how; a pattern with a NUL byte is refused
    (no path can hold one)."""
    patterns = request.output_files
    patterns = (patterns,) if isinstance(patterns, str) else tuple(patterns)
    for pattern in patterns:
        if "\0" in pattern:
            raise WorkspacePathError(
                f"output_files pattern {excerpt(pattern)} must not contain NUL bytes"
            )
    return OutputCollection(patterns, request.save_as_artifacts, request.omit_inline_content)


def timeout_seconds(timeout: float | None) -> float:
    """The seconds a run may take: ``timeout``, the default for None and 0; a WorkspaceError
    for anything else than a number from 0 to a day."""
    if timeout is None or timeout == 0:
        return DEFAULT_TIMEOUT_SECONDS
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise WorkspaceError(
            f"timeout must be a positive number of seconds, got {excerpt(timeout)}"
        )
    if not timeout <= MAX_TIMEOUT_SECONDS:
        raise WorkspaceError(
            f"timeout must be at most {MAX_TIMEOUT_SECONDS} seconds (one day),"
            f" got {excerpt(timeout)}"
        )
    return float(timeout)


def input_name(relative: object) -> str:
    """``relative`` as the name of a file under work/inputs; a WorkspaceError when it cannot
    be one (not a string, NUL bytes, empty, absolute, or with ``..``)."""
    if not isinstance(relative, str):
        raise WorkspacePathError(f"input name {excerpt(relative)} must be a string")
    check_text("input name", relative)
    path = PurePosixPath(relative)
    if not relative.strip() or path.is_absolute() or ".." in path.parts:
        raise WorkspacePathError(
            f"input name {excerpt(relative)} must name a file inside work/inputs"
            " (a relative path without '..')"
        )
    return path.as_posix()
