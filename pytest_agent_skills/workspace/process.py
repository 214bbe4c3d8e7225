"""Run a host process with bounded output capture and a timeout that kills its whole group.

Used by the ``local`` and ``sandbox`` runtimes.  The child gets its own
session (so its process group holds everything it starts unless it calls
``setsid`` itself), stdin from a file or ``/dev/null`` (never the test
process's stdin), and two pipes read in this thread with a selector; each
stream keeps its first ``cap`` bytes and only counts the rest, so a command
printing a gibibyte costs a few kilobytes of memory.  When the command's
shell ends - normally or at the timeout - whatever is left of its process
group is killed, so no process of the command outlives the result.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .capture import BoundedCapture


class Sink(Protocol):
    """Where the bytes read from one pipe go (a :class:`BoundedCapture`, an output stream)."""

    def feed(self, data: bytes) -> None: ...


#: After the main process ended or was killed, how long to keep draining the pipes.
DRAIN_GRACE_SECONDS = 1.0
_READ_SIZE = 256 * 1024


@dataclass
class ProcessOutcome:
    stdout: BoundedCapture
    stderr: BoundedCapture
    exit_code: int
    timed_out: bool
    duration_ms: int


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_path: Path | None,
    timeout: float,
    cap: int,
) -> ProcessOutcome:
    started = time.monotonic()
    stdin = open(stdin_path, "rb") if stdin_path is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()
    stdout, stderr = BoundedCapture(cap), BoundedCapture(cap)
    exit_code, timed_out = supervise(
        process, {process.stdout.fileno(): stdout, process.stderr.fileno(): stderr}, timeout
    )
    process.stdout.close()
    process.stderr.close()
    return ProcessOutcome(
        stdout=stdout,
        stderr=stderr,
        exit_code=exit_code,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def supervise(
    process: subprocess.Popen[bytes], sinks: dict[int, Sink], timeout: float
) -> tuple[int, bool]:
    """Feed ``sinks`` (by file descriptor) until the process exits or ``timeout`` passes.

    Then kill what is left of its process group, and drain the descriptors
    for at most :data:`DRAIN_GRACE_SECONDS`.  Returns the exit code (-1 on a
    timeout) and whether it timed out.  The caller closes the descriptors.
    """
    open_fds = set(sinks)
    deadline = time.monotonic() + timeout
    timed_out = _read_pipes(process, sinks, open_fds, deadline, until_exit=True)
    kill_group(process.pid)
    exit_code = process.wait()
    if open_fds:
        drain_until = time.monotonic() + DRAIN_GRACE_SECONDS
        _read_pipes(process, sinks, open_fds, drain_until, until_exit=False)
    return (-1 if timed_out else exit_code), timed_out


def _read_pipes(
    process: subprocess.Popen[bytes],
    sinks: dict[int, Sink],
    open_fds: set[int],
    deadline: float,
    *,
    until_exit: bool,
) -> bool:
    """Feed the sinks from the pipes in ``open_fds`` (removed at EOF); True on a timeout.

    With ``until_exit`` it stops as soon as the main process has exited (a
    background child may keep the pipes open); otherwise it stops at EOF.
    The exit is seen through a pidfd in the same ``epoll`` as the pipes, so
    there is no polling delay; without pidfd support it is polled every 50 ms.
    """
    exit_fd = _pidfd(process.pid) if until_exit else None
    tick = None if exit_fd is not None or not until_exit else 0.05
    try:
        with selectors.DefaultSelector() as selector:
            for fd in open_fds:
                selector.register(fd, selectors.EVENT_READ)
            if exit_fd is not None:
                selector.register(exit_fd, selectors.EVENT_READ)
            while open_fds or until_exit:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return not until_exit or process.poll() is None
                for key, _ in selector.select(remaining if tick is None else min(remaining, tick)):
                    if key.fd == exit_fd:
                        continue
                    chunk = _read_chunk(key.fd)
                    if chunk:
                        sinks[key.fd].feed(chunk)
                    elif chunk is not None:
                        selector.unregister(key.fd)
                        open_fds.discard(key.fd)
                if until_exit and process.poll() is not None:
                    return False
            return False
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _read_chunk(fd: int) -> bytes | None:
    """What is readable on ``fd``: b"" at its end (for a pty master: EIO once the slave is
    closed everywhere), None when a non-blocking ``fd`` has nothing after all."""
    try:
        return os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return None
    except OSError as error:
        if error.errno == errno.EIO:
            return b""
        raise


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the process group ``pgid`` (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
