"""Host processes of a command: start, supervise with bounded capture, and kill the whole tree.

Used by the ``local`` and ``sandbox`` runtimes (runs and interactive sessions).
The child gets its own session, stdin from a file, a pipe or ``/dev/null``
(never the test process's stdin), and its output read in one thread with a
selector; each stream of a run keeps its first ``cap`` bytes and only counts
the rest, so a command printing a gibibyte costs a few kilobytes of memory.

When the command's shell ends - normally, at the timeout, or when the
workspace closes - every process it started is killed (:func:`kill_tree`),
``nohup``, double forks and ``setsid`` daemons included:

- in a PID namespace (the sandbox always; the local runtime where root or user
  namespaces allow), killing the first process kills the namespace;
- otherwise the process group, plus a sweep of ``/proc`` for the processes
  whose environment holds the command's tag (``SKILLS_PROCESS_TAG=<random>``,
  which every process it starts inherits - ``setsid`` and double forks too).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from .capture import BoundedCapture

#: The environment variable that marks every process of one command.
TAG_VARIABLE = "SKILLS_PROCESS_TAG"
#: After the main process ended or was killed, how long to keep draining the pipes.
DRAIN_GRACE_SECONDS = 1.0
#: How many times a sweep looks again for tagged processes (a forking loop refills the list).
SWEEP_PASSES = 50
_READ_SIZE = 256 * 1024


#: Where the bytes read from one pipe go (a :class:`BoundedCapture`'s ``feed``, an output
#: stream's).
Sink = Callable[[bytes], None]


class Killable(Protocol):
    def kill(self) -> None: ...


def new_tag() -> str:
    """A fresh tag for one command (the value of :data:`TAG_VARIABLE`)."""
    return secrets.token_hex(16)


@dataclass
class ProcessOutcome:
    stdout: BoundedCapture
    stderr: BoundedCapture
    exit_code: int
    timed_out: bool
    duration_ms: int


class ProcessRegistry:
    """What runs in one workspace (anything with ``kill()``); ``close()`` kills it all, and
    whatever is added after."""

    def __init__(self) -> None:
        self._items: set[Killable] = set()
        self._lock = threading.Lock()
        self._closed = False

    def add(self, item: Killable) -> None:
        with self._lock:
            if not self._closed:
                self._items.add(item)
                return
        item.kill()

    def discard(self, item: Killable) -> None:
        with self._lock:
            self._items.discard(item)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            items, self._items = list(self._items), set()
        for item in items:
            item.kill()


class HostProcessTree:
    """A command started on this machine (directly, in ``unshare`` or in bubblewrap) and every
    process it starts; ``kill()`` ends them all (idempotent, from any thread)."""

    def __init__(self, popen: subprocess.Popen[bytes], tag: str, *, sweep: bool) -> None:
        self.popen = popen
        self.tag = tag
        self.sweep = sweep
        self._lock = threading.Lock()
        self._killed = False

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        sweep: bool,
        stdin: int | IO[bytes],
        output: int,
    ) -> HostProcessTree:
        """Start ``argv`` in its own session with ``stdin``, stdout and stderr to ``output``
        (``subprocess.PIPE``: one pipe each; a terminal's file descriptor: that terminal)."""
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=stdin,
            stdout=output,
            stderr=output,
            start_new_session=True,
            close_fds=True,
        )
        return cls(popen, env[TAG_VARIABLE], sweep=sweep)

    def kill(self) -> None:
        """Kill the tree, then reap the shell, once, under one lock (once reaped, the pid and
        process group id may belong to someone else)."""
        with self._lock:
            if self._killed:
                return
            self._killed = True
            kill_tree(self.popen.pid, self.tag, sweep=self.sweep)
            self.popen.wait()

    def collect(self, *, timeout: float, cap: int) -> ProcessOutcome:
        """Read the output until the shell exits (or ``timeout``); then kill the whole tree."""
        started = time.monotonic()
        process = self.popen
        assert process.stdout is not None and process.stderr is not None
        stdout, stderr = BoundedCapture(cap), BoundedCapture(cap)
        exit_code, timed_out = supervise(
            process,
            {process.stdout.fileno(): stdout.feed, process.stderr.fileno(): stderr.feed},
            timeout,
            kill=self.kill,
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
    process: subprocess.Popen[bytes],
    sinks: dict[int, Sink],
    timeout: float,
    *,
    kill: Callable[[], None],
) -> tuple[int, bool]:
    """Feed ``sinks`` (by file descriptor) until the process exits or ``timeout`` passes.

    Then ``kill`` what is left of it (:meth:`HostProcessTree.kill`), and drain the
    descriptors for at most :data:`DRAIN_GRACE_SECONDS`.  Returns the exit code
    (-1 on a timeout) and whether it timed out.  The caller closes the descriptors.
    """
    open_fds = set(sinks)
    deadline = time.monotonic() + timeout
    timed_out = _read_pipes(process, sinks, open_fds, deadline, until_exit=True)
    kill()
    exit_code = process.wait()
    if open_fds:
        drain_until = time.monotonic() + DRAIN_GRACE_SECONDS
        _read_pipes(process, sinks, open_fds, drain_until, until_exit=False)
    return (-1 if timed_out else exit_code), timed_out


def kill_tree(pid: int, tag: str, *, sweep: bool) -> None:
    """Kill the process group ``pid`` (a namespace's first process takes the namespace along)
    and, with ``sweep``, every process carrying ``tag``."""
    kill_group(pid)
    if sweep:
        kill_tagged(tag)


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the process group ``pgid`` (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_tagged(tag: str, proc: Path = Path("/proc")) -> None:
    """SIGKILL every process whose environment holds ``TAG_VARIABLE=tag``.

    Only processes whose environment this user may read are seen (its own,
    or all as root); the sweep repeats until a pass finds none.
    """
    entry = f"{TAG_VARIABLE}={tag}".encode()
    own = os.getpid()
    for _ in range(SWEEP_PASSES):
        found = [pid for pid in _tagged_pids(proc, entry) if pid != own]
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if not found:
            break


def _tagged_pids(proc: Path, entry: bytes) -> list[int]:
    pids: list[int] = []
    with os.scandir(proc) as entries:
        for item in entries:
            if not item.name.isdigit():
                continue
            try:
                with open(f"{item.path}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:  # gone, or another user's process
                continue
            if entry in environ.split(b"\0"):
                pids.append(int(item.name))
    return pids


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
                    return not until_exit or not _has_exited(process)
                for key, _ in selector.select(remaining if tick is None else min(remaining, tick)):
                    if key.fd == exit_fd:
                        continue
                    chunk = _read_chunk(key.fd)
                    if chunk:
                        sinks[key.fd](chunk)
                    elif chunk is not None:
                        selector.unregister(key.fd)
                        open_fds.discard(key.fd)
                if until_exit and _has_exited(process):
                    return False
            return False
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _has_exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the process has exited, without reaping it (``Popen.poll`` would): until it is
    reaped its pid, hence its process group id, cannot be taken by another program, so the
    kill of its group that follows never hits a stranger's."""
    if process.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped meanwhile by a wait() in another thread
        return True


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
