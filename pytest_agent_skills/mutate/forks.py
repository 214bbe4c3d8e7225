"""Jobs run in forked processes, a few at once, each with a deadline: a mutant that loops
forever, crashes the interpreter or leaves processes behind costs its own process group only.

Each child is the leader of a process group of its own, so that Ctrl-C at the terminal
reaches this process alone, which then ends every child's group (and whatever the child
started) before it lets the interrupt go on."""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
#: Seconds a child asked to stop has to unwind (its commands killed) before it is killed.
GRACE_SECONDS = 5.0


def _stop(signum: int, frame: object) -> None:
    """A child's SIGTERM: unwind, so that what the job opened is closed on the way out."""
    raise SystemExit(128 + signum)


@dataclass(frozen=True)
class Finished(Generic[T]):
    """A job's value."""

    value: T
    seconds: float


@dataclass(frozen=True)
class Failed:
    """A job that raised, died or ran past its deadline (``timed_out``)."""

    message: str
    seconds: float
    timed_out: bool = False


@dataclass
class _Child:
    index: int
    pid: int
    reader: int
    started: float
    data: bytearray


def run_forked(
    jobs: Sequence[Callable[[], T]], parallel: int, timeout: float | None
) -> list[Finished[T] | Failed]:
    """Each job's outcome, in the order of ``jobs``: at most ``parallel`` run at once, each in
    a forked process that gets ``timeout`` seconds (None: no limit)."""
    outcomes: list[Finished[T] | Failed | None] = [None] * len(jobs)
    waiting = list(range(len(jobs)))
    running: dict[int, _Child] = {}
    guard = _InterruptGuard()
    try:
        with guard:
            while waiting or running:
                while waiting and len(running) < max(1, parallel):
                    with guard.forking():
                        child = _start(waiting.pop(0), jobs)
                        running[child.reader] = child
                _wait(running, outcomes, timeout)
    except BaseException:
        for child in running.values():
            _end(child)
        raise
    return [outcome for outcome in outcomes if outcome is not None]


class _InterruptGuard:
    """Ctrl-C while this process forks is held until the fork is done: Python runs its
    at-fork handlers there and drops an exception raised in one, so the interrupt would be
    lost; anywhere else it raises :class:`KeyboardInterrupt` at once."""

    def __init__(self) -> None:
        self.in_fork = False
        self.pending = False
        self.previous: object = None

    def __enter__(self) -> _InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._interrupted)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)  # type: ignore[arg-type]

    def _interrupted(self, signum: int, frame: object) -> None:
        if self.in_fork:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def forking(self) -> Iterator[None]:
        self.in_fork = True
        try:
            yield
        finally:
            self.in_fork = False
        if self.pending:
            raise KeyboardInterrupt


def _start(index: int, jobs: Sequence[Callable[[], T]]) -> _Child:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run the job, send its pickled outcome, end at once
        os.close(reader)
        code = 0
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, _stop)
            payload = pickle.dumps(("ok", jobs[index]()))
        except BaseException as error:
            payload = pickle.dumps(("failed", f"{type(error).__name__}: {error}"))
            code = 1
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(writer, view) :]
        finally:
            os._exit(code)
    os.close(writer)
    with contextlib.suppress(OSError):  # the child may have done it, and ended
        os.setpgid(pid, pid)  # also here: the child may not have run yet
    return _Child(index, pid, reader, time.monotonic(), bytearray())


def _wait(
    running: dict[int, _Child], outcomes: list[Finished[T] | Failed | None], timeout: float | None
) -> None:
    """Read what the children sent until one ends or a deadline passes."""
    now = time.monotonic()
    wait = None
    if timeout is not None:
        wait = max(0.0, min(child.started + timeout for child in running.values()) - now)
    ready, _, _ = select.select(list(running), [], [], wait)
    for reader in ready:
        child = running[reader]
        chunk = os.read(reader, 1 << 16)
        if chunk:
            child.data.extend(chunk)
            continue
        del running[reader]
        os.close(reader)
        _, status = os.waitpid(child.pid, 0)
        outcomes[child.index] = _outcome(child, status)
    if timeout is None:
        return
    now = time.monotonic()
    for reader, child in list(running.items()):
        if now - child.started >= timeout:
            del running[reader]
            _end(child)
            outcomes[child.index] = Failed(
                f"no verdict after {timeout:g} s", now - child.started, timed_out=True
            )


def _outcome(child: _Child, status: int) -> Finished[T] | Failed:
    seconds = time.monotonic() - child.started
    try:
        kind, value = pickle.loads(bytes(child.data))
    except Exception:
        return Failed(f"the process ended without an answer (wait status {status})", seconds)
    if kind == "ok":
        return Finished(value, seconds)
    return Failed(str(value), seconds)


def _end(child: _Child) -> None:
    """Ask the child's process group to stop (SIGTERM: the child unwinds, and its runtimes
    kill the commands they started in sessions of their own), then kill what is left of it
    after :data:`GRACE_SECONDS`; reap the child."""
    with contextlib.suppress(OSError):  # already gone
        os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(child.pid, os.WNOHANG)[0] == child.pid:
                break
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.close(child.reader)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(child.pid, 0)
