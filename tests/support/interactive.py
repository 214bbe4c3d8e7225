"""Shared pieces of the interactive-session tests: the greeter skill, polling, process checks.

No test here sleeps to let a process get somewhere: a session call returns as soon as the
process exits or waits at a prompt (see workspace/interactive.py), and every wait below has a
generous deadline and then asserts on content.
"""

from __future__ import annotations

import contextlib
import os
import resource
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace.interactive import ExecChunk, ExecSession
from tests.support.protocol import EXAMPLE_SKILLS

GREETER = EXAMPLE_SKILLS / "interactive-greeter"
GREET = "python3 scripts/greet.py"
MENU = "1. red\n2. green\n3. blue\nEnter the number of your colour: "
#: Long enough for a loaded machine; calls return early on a prompt or an exit.
YIELD_MS = 60_000
DEADLINE_SECONDS = 120.0


def greeter() -> Skill:
    return Skill.load(GREETER)


def poll_until(
    session: ExecSession,
    done: Callable[[ExecChunk], bool],
    *,
    lines: int = 0,
    previous: ExecChunk | None = None,
) -> list[ExecChunk]:
    """Poll until ``done(chunk)``; every chunk, checked to continue where the last one ended."""
    chunks: list[ExecChunk] = []
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        chunk = session.poll(2_000, lines)
        if previous is not None:
            assert chunk.offset == previous.next_offset, (previous, chunk)
        assert chunk.next_offset - chunk.offset == len(chunk.output.encode("utf-8"))
        chunks.append(chunk)
        previous = chunk
        if done(chunk):
            return chunks
        assert time.monotonic() < deadline, f"no end after {DEADLINE_SECONDS}s: {chunks}"


def answer_until_exit(session: ExecSession, chars: str) -> list[ExecChunk]:
    """Submit ``chars``, then poll until the process has exited; every chunk since the write."""
    first = session.write(chars, submit=True, yield_ms=YIELD_MS)
    return [first] if exited(first) else [first, *poll_until(session, exited, previous=first)]


def exited(chunk: ExecChunk) -> bool:
    return chunk.status == "exited"


def unique_marker() -> str:
    """A sleep length no other process uses: ``sleep <marker>`` is findable in /proc."""
    return f"3000.{uuid.uuid4().int % 10**9:09d}"


def processes_running(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker`` (containers' processes included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if marker.encode() in cmdline and b"pytest" not in cmdline:
            found.append(int(entry.name))
    return found


def all_gone(marker: str) -> bool:
    """Whether every process with ``marker`` is gone: a SIGKILL is delivered asynchronously,
    so a killed process may show for a moment on a loaded machine (the wait has a deadline)."""
    wait_for(lambda: not processes_running(marker), f"processes with {marker} to be gone")
    return True


def wait_for(condition: Callable[[], Any], what: str) -> Any:
    """``condition()`` once truthy, checked until the deadline (a state to reach, not a delay)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what}: not after {DEADLINE_SECONDS}s"
        time.sleep(0.05)
    return value


@contextlib.contextmanager
def descriptors_past_select_limit() -> Iterator[None]:
    """Hold open files until a new file descriptor is numbered past 1024, the most select() takes
    (a test process holding many files, sockets and pipes)."""
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096
    if limits[0] < wanted:
        if limits[1] < wanted and os.geteuid() != 0:
            pytest.skip(f"the open-file limit ({limits[1]}) is below {wanted} for this user")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(limits[1], wanted)))
    held: list[int] = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
