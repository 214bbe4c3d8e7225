"""The ``strace`` record of a detonation run, read for what it says about files: the writes a
command attempted (refused or not) and the files it opened.

A line is ``PID  syscall(args) = result``; a call interrupted by another process's line is
split into ``<unfinished ...>`` and ``<... resumed>``: its first half holds the path and the
flags, which is all that is read here.
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

_CALL = re.compile(
    r"^\d+\s+(?P<name>\w+)\((?P<args>.*?)(?:\) += (?P<result>.*)| <unfinished \.\.\.>)$"
)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
#: Calls that change the file system whatever their flags (every path they name).
_CHANGING = frozenset(
    {
        "creat", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat",
        "symlink", "symlinkat", "link", "linkat", "truncate", "rmdir", "chmod", "fchmodat",
    }
)  # fmt: skip
_OPENING = frozenset({"open", "openat", "openat2"})


class FileCall(NamedTuple):
    """One call that named a file: the call, the path (absolute when the trace tells), whether
    it would write, its result (``0``, ``3``, ``-1 EROFS (Read-only file system)``), and the
    program the calling process ran (the file name of its last ``execve``; empty when the
    trace does not tell)."""

    call: str
    path: str
    writes: bool
    result: str
    program: str = ""


def _unescape(text: str) -> str:
    """A path as strace prints it (C escapes, ``\\x..`` bytes) back to text."""
    return (
        text.encode("latin-1", "backslashreplace")
        .decode("unicode_escape")
        .encode("latin-1", "replace")
        .decode("utf-8", "replace")
    )


def file_calls(trace: str, cwd: str) -> list[FileCall]:
    """The calls of ``trace`` that name a file; relative paths are read against ``cwd`` (the
    run's working directory: a command that changes folder first is placed there anyway)."""
    calls = []
    programs: dict[str, str] = {}
    for line in trace.splitlines():
        match = _CALL.match(line)
        if match is None:
            continue
        name, args = match["name"], match["args"]
        pid = line.split(maxsplit=1)[0]
        if name == "execve" and (match["result"] or "").strip() == "0":
            executed = _STRING.search(args)
            programs[pid] = posixpath.basename(_unescape(executed[1])) if executed else ""
        if name not in _OPENING and name not in _CHANGING:
            continue
        strings = [_unescape(text) for text in _STRING.findall(args)]
        if not strings:
            continue
        writes = name in _CHANGING or any(flag in args for flag in _WRITE_FLAGS)
        paths = strings if name in _CHANGING else strings[:1]
        for path in paths:
            absolute = posixpath.normpath(posixpath.join(cwd, path))
            result = (match["result"] or "").strip()
            calls.append(FileCall(name, absolute, writes, result, programs.get(pid, "")))
    return calls


def is_under(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)
