"""What a command runs with, beside its skill and its command line: :class:`RunRequest` (and
:class:`ExecRequest` for an interactive session), one frozen value each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict


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
