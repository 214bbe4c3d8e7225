"""Interactive sessions (``skill_exec``): a command that keeps running, reads the stdin it is
sent and yields its output as it comes.

:meth:`Workspace.exec <pytest_agent_skills.workspace.workspace.Workspace.exec>` prepares the
command exactly as :meth:`~pytest_agent_skills.workspace.workspace.Workspace.run` does (staging,
``cwd`` confinement, the clean environment, ``HOME`` in the workspace, the timeout) and asks the
runtime to start it (:meth:`Runtime.start_interactive
<pytest_agent_skills.workspace.runtime.Runtime.start_interactive>`): pipes or a pseudo-terminal
on the host for ``local`` and ``sandbox`` (:mod:`.interactive_host`), an ``exec`` with stdin
attached in a container of its own for ``docker`` (:mod:`.interactive_docker`).  A reader thread
feeds an :class:`OutputStream`; each :meth:`ExecSession.poll` / :meth:`ExecSession.write` takes
the output that arrived since the previous call.

When a call returns (see :meth:`OutputStream.wait`): at once when the process has exited or a
page of output (``poll_lines`` lines, or :data:`CHUNK_CAP_BYTES`) is waiting; after the output
has been quiet for :data:`SETTLE_SECONDS` when it ends in what looks like a prompt
(:func:`detect_interaction`); otherwise at the end of the yield time.  Unlike the reference,
quiet output that is not a prompt does not end the wait, so a scripted conversation gets the
same chunks on a fast and on a loaded machine.

Offsets count bytes of the session's output as returned (UTF-8, ``\\r\\n`` as ``\\n``), so each
call's ``offset`` is the previous call's ``next_offset`` unless output was dropped unread.
Once the process has exited, the first call that sees it carries the :class:`RunResult` (output
files collected as by ``run``); the session stays until it is killed or the workspace closes,
and closing the workspace kills every process of every session.
"""

from __future__ import annotations

import select
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..excerpt import excerpt
from .capture import BoundedCapture, drop_partial_tail
from .errors import WorkspaceError, run_all
from .process import ProcessOutcome
from .result import STREAM_CAP_BYTES, RunResult
from .spec import check_text

if TYPE_CHECKING:
    from .requests import OutputCollection
    from .spec import PreparedRun
    from .workspace import Workspace

RUNNING = "running"
EXITED = "exited"
KILLED = "killed"
#: How long ``skill_exec`` waits for output when not told (the reference's defaults).
DEFAULT_EXEC_YIELD_MS = 1_000
#: How long ``skill_write_stdin`` / ``skill_poll_session`` wait when not told.
DEFAULT_IO_YIELD_MS = 400
#: Lines returned per call when not told.
DEFAULT_POLL_LINES = 40
#: A longer yield time is shortened to this (the session's timeout ends every wait anyway).
MAX_YIELD_MS = 600_000
#: Output quiet for this long, ending in a prompt, ends a wait early (the reference's settle).
SETTLE_SECONDS = 0.075
#: At most this many bytes of output per call.
CHUNK_CAP_BYTES = STREAM_CAP_BYTES
#: Output not yet taken by a call is kept up to this many bytes; older output is dropped.
UNREAD_CAP_BYTES = 1024 * 1024
#: How long a write waits for a process that does not read its stdin.
WRITE_TIMEOUT_SECONDS = 5.0
#: How long a kill waits for the reader thread (it only drains the last output, briefly).
READER_STOP_SECONDS = 60.0
#: Sessions one workspace may hold at once (running or exited, until killed).
MAX_SESSIONS = 64
_PROMPT_TAIL_BYTES = 4096
_SELECTION_PHRASES = ("enter the number", "choose a number", "select a number")


class UnknownSessionError(WorkspaceError):
    """No session with that id in this workspace (never started, or killed)."""

    @classmethod
    def about(cls, session_id: str) -> UnknownSessionError:
        """The error for ``session_id``, echoed as the reference does when short, cut when
        long (a model may send anything)."""
        return cls(f"unknown session_id: {excerpt(session_id, quoted=False)}")


class ProcessGoneError(Exception):
    """The process can no longer read input (it has exited); internal to the runtimes."""


# --- interaction hints --------------------------------------------------------------------------


@dataclass(frozen=True)
class Interaction:
    """A best-effort hint that the process waits for input (the reference's heuristic)."""

    needs_input: bool
    kind: str  # "prompt" or "selection"
    hint: str

    def to_dict(self) -> dict[str, Any]:
        return {"needs_input": self.needs_input, "kind": self.kind, "hint": self.hint}


def detect_interaction(status: str, output: str) -> Interaction | None:
    """The reference's ``_detect_interaction``: a numbered menu or a line ending in ``:``/``?``.

    Only for a running process; the hint is the last non-empty line of ``output``.
    """
    if status != RUNNING:
        return None
    hint = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    if not hint:
        return None
    lower = hint.lower()
    if any(phrase in lower for phrase in _SELECTION_PHRASES) or _has_menu(output):
        return Interaction(True, "selection", hint)
    if hint.endswith((":", "?")) or "press enter" in lower or "type your" in lower:
        return Interaction(True, "prompt", hint)
    return None


def _has_menu(output: str) -> bool:
    """Two or more lines starting like ``1.`` or ``2)``."""
    numbered = 0
    for line in output.splitlines():
        text = line.strip()
        if len(text) >= 2 and text[0].isdigit() and text[1] in ".)":
            numbered += 1
            if numbered >= 2:
                return True
    return False


# --- the output of one process ------------------------------------------------------------------


@dataclass(frozen=True)
class Taken:
    """What one call takes from an :class:`OutputStream`."""

    text: str
    offset: int
    next_offset: int
    dropped: int
    finished: bool


class OutputStream:
    """The output of one interactive process, fed by its reader thread, taken by calls.

    It keeps the unread output (stdout and stderr in arrival order, ``\\r\\n`` as ``\\n``, at
    most :data:`UNREAD_CAP_BYTES`) and, for the final :class:`RunResult`, the head of stdout
    and stderr separately as ``run`` does.
    """

    def __init__(self, cap: int = STREAM_CAP_BYTES) -> None:
        self.stdout = BoundedCapture(cap)
        self.stderr = BoundedCapture(cap)
        self.started = time.monotonic()
        self.exit_code: int | None = None
        self.timed_out = False
        self.finished = False
        self.duration_ms = 0
        self._changed = threading.Condition()
        self._unread = bytearray()
        self._unread_lines = 0
        self._offset = 0  # stream position of _unread[0]
        self._dropped = 0  # bytes dropped unread since the last take
        self._pending_cr: dict[str, bool] = {"stdout": False, "stderr": False}
        self._last_output = self.started

    def feed(self, stream: str, data: bytes) -> None:
        with self._changed:
            (self.stdout if stream == "stdout" else self.stderr).feed(data)
            if self._pending_cr[stream]:
                data = b"\r" + data
            self._pending_cr[stream] = data.endswith(b"\r")
            if self._pending_cr[stream]:
                data = data[:-1]  # it may be the first half of a \r\n split across reads
            self._append(data.replace(b"\r\n", b"\n"))

    def finish(self, exit_code: int, timed_out: bool) -> None:
        with self._changed:
            for stream, pending in self._pending_cr.items():
                if pending:
                    self._pending_cr[stream] = False
                    self._append(b"\r")
            self.exit_code = exit_code
            self.timed_out = timed_out
            self.duration_ms = int((time.monotonic() - self.started) * 1000)
            self.finished = True
            self._changed.notify_all()

    def outcome(self) -> ProcessOutcome:
        """The finished process as ``run`` reports one."""
        assert self.finished and self.exit_code is not None
        return ProcessOutcome(
            self.stdout, self.stderr, self.exit_code, self.timed_out, self.duration_ms
        )

    def _append(self, data: bytes) -> None:
        if not data:
            return
        self._unread += data
        self._unread_lines += data.count(b"\n")
        excess = len(self._unread) - UNREAD_CAP_BYTES
        if excess > 0:
            # Drop the oldest unread output, and any UTF-8 continuation bytes left at the cut.
            while excess < len(self._unread) and self._unread[excess] & 0xC0 == 0x80:
                excess += 1
            self._unread_lines -= self._unread.count(b"\n", 0, excess)
            del self._unread[:excess]
            self._offset += excess
            self._dropped += excess
        self._last_output = time.monotonic()
        self._changed.notify_all()

    def wait(self, deadline: float, lines: int) -> None:
        """Block until the process finished, a page waits, a prompt settled, or ``deadline``."""
        with self._changed:
            while not self.finished:
                if self._unread_lines >= lines or len(self._unread) >= CHUNK_CAP_BYTES:
                    return
                now = time.monotonic()
                if now >= deadline:
                    return
                timeout = deadline - now
                if self._unread:
                    quiet = now - self._last_output
                    if quiet < SETTLE_SECONDS:
                        timeout = min(timeout, SETTLE_SECONDS - quiet)
                    elif self._awaits_input():
                        return
                self._changed.wait(timeout)

    def _awaits_input(self) -> bool:
        tail = bytes(self._unread[-_PROMPT_TAIL_BYTES:]).decode("utf-8", "replace")
        return detect_interaction(RUNNING, tail) is not None

    def take(self, lines: int) -> Taken:
        """Up to ``lines`` lines (and :data:`CHUNK_CAP_BYTES`) of the unread output.

        While the process runs, an incomplete UTF-8 character at the end stays for the next
        call; an unterminated last line is taken (it may be a prompt).
        """
        with self._changed:
            end = 0
            for _ in range(lines):
                newline = self._unread.find(b"\n", end)
                if newline < 0:
                    end = len(self._unread)
                    break
                end = newline + 1
            end = min(end, CHUNK_CAP_BYTES)
            piece = bytes(self._unread[:end])
            if end < len(self._unread) or not self.finished:
                piece = drop_partial_tail(piece)
            del self._unread[: len(piece)]
            self._unread_lines -= piece.count(b"\n")
            offset = self._offset
            self._offset += len(piece)
            dropped, self._dropped = self._dropped, 0
            return Taken(
                piece.decode("utf-8", "replace"), offset, self._offset, dropped, self.finished
            )


# --- the process behind a session -------------------------------------------------------------


class InteractiveProcess(ABC):
    """A started command whose output goes to an :class:`OutputStream` (made by a runtime).

    Its reader thread (:attr:`reader`, started by the subclass) enforces the spec's timeout and
    calls :meth:`OutputStream.finish` exactly once, after every process of the command is gone
    and the output is drained.
    """

    reader: threading.Thread

    @abstractmethod
    def write(self, data: bytes, timeout: float) -> int:
        """Write ``data`` to the command's stdin; the bytes written within ``timeout`` seconds.

        Raises :class:`ProcessGoneError` when the command can no longer read.
        """

    @abstractmethod
    def terminate(self) -> None:
        """Kill every process of the command (the reader thread then finishes the stream)."""

    def kill(self) -> None:
        """Kill every process of the command and wait until its output stream is finished."""
        self.terminate()
        self.reader.join(READER_STOP_SECONDS)
        if self.reader.is_alive():
            raise WorkspaceError(
                f"the output reader of {self!r} did not stop within {READER_STOP_SECONDS:g}s"
                " after its processes were killed"
            )


def write_within(target: Any, send: Callable[[bytes], int], data: bytes, timeout: float) -> int:
    """Write ``data`` with ``send`` (non-blocking, or blocking once ``target`` is writable),
    waiting for ``target`` to become writable for at most ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    written = 0
    while written < len(data):
        try:
            written += send(data[written:])
            continue
        except (BlockingIOError, InterruptedError):
            pass
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        wait_ready(target, select.POLLOUT, remaining)
    return written


def wait_ready(target: Any, events: int, timeout: float) -> bool:
    """Whether ``target`` (a file descriptor or a socket) is ready for ``events`` (``POLLIN``,
    ``POLLOUT``) within ``timeout`` seconds; its end or an error counts as ready.  poll(), not
    select(), which refuses descriptors numbered past 1024."""
    poller = select.poll()
    poller.register(target, events)
    return bool(poller.poll(max(0.0, timeout) * 1000))


# --- sessions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExecChunk:
    """What one ``skill_exec`` / ``skill_write_stdin`` / ``skill_poll_session`` call returns."""

    session_id: str
    status: str
    output: str
    offset: int
    next_offset: int
    exit_code: int | None = None
    interaction: Interaction | None = None
    #: The run's result, on the first call that sees the process exited.
    result: RunResult | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The reference's ``ExecOutput`` (``None`` fields left out), plus ``warnings``."""
        data: dict[str, Any] = {
            "status": self.status,
            "session_id": self.session_id,
            "output": self.output,
            "offset": self.offset,
            "next_offset": self.next_offset,
        }
        if self.exit_code is not None:
            data["exit_code"] = self.exit_code
        if self.interaction is not None:
            data["interaction"] = self.interaction.to_dict()
        if self.result is not None:
            data["result"] = self.result.to_dict()
        if self.warnings:
            data["warnings"] = list(self.warnings)
        return data


class ExecSession:
    """One interactive command in a workspace; made by :meth:`Workspace.exec`."""

    def __init__(
        self,
        session_id: str,
        workspace: Workspace,
        prepared: PreparedRun,
        stream: OutputStream,
        process: InteractiveProcess,
        collect: OutputCollection,
    ) -> None:
        self.id = session_id
        self.command = prepared.spec.command
        self._workspace = workspace
        self._prepared = prepared
        self._stream = stream
        self._process = process
        self._collect = collect
        self._result: RunResult | None = None
        self._result_reported = False
        self._lock = threading.RLock()
        #: Warnings of the ``stdin`` given at the start: the next chunk's and the result's.
        self._stdin_warnings: tuple[str, ...] = ()
        self._stdin_warnings_shown = False

    @property
    def status(self) -> str:
        return EXITED if self._stream.finished else RUNNING

    @property
    def received_bytes(self) -> int:
        """Bytes of output (stdout and stderr) that reached the session so far, read or not.

        Output the process has written may still be on its way (Docker buffers up to megabytes
        of an exec's output), so this, not a sign from the process, tells what has arrived.
        """
        return self._stream.stdout.total + self._stream.stderr.total

    @property
    def result(self) -> RunResult | None:
        """The run's result once the process has exited (output files collected), else None
        (also when the workspace closed before anything asked for it)."""
        with self._lock:
            if self._result is None and self._stream.finished and not self._workspace.closed:
                result = self._workspace.finish_run(
                    self._prepared, self._stream.outcome(), self._collect
                )
                warnings = (*self._stdin_warnings, *result.warnings)
                self._result = replace(result, warnings=warnings)
            return self._result

    def poll(self, yield_ms: int | None = None, lines: int = 0) -> ExecChunk:
        """The output since the previous call, after waiting up to ``yield_ms`` (see module)."""
        return self._chunk(yield_ms or DEFAULT_IO_YIELD_MS, lines, ())

    def write(
        self, chars: str, *, submit: bool = False, yield_ms: int | None = None, lines: int = 0
    ) -> ExecChunk:
        """Send ``chars`` (and a newline when ``submit``) to stdin, then :meth:`poll`.

        Writing nothing is a poll.  Input for a process that has exited is not an error: the
        chunk says ``exited`` and a warning says the input was not written.
        """
        check_text("chars", chars, nul_allowed=True)
        with self._lock:
            warnings = self.send((chars + "\n" if submit else chars).encode("utf-8"))
            return self._chunk(yield_ms or DEFAULT_IO_YIELD_MS, lines, warnings)

    def send_stdin(self, data: bytes) -> None:
        """Write the ``stdin`` the session was started with; its warnings (the process does
        not read it, ...) come with the next chunk and stay in the result's."""
        with self._lock:
            self._stdin_warnings = self.send(data)

    def send(self, data: bytes) -> tuple[str, ...]:
        """Write ``data`` to stdin; warnings when it was not (all) written."""
        if not data:
            return ()
        gone = (f"the process has exited; the input ({len(data)} bytes) was not written",)
        if self._stream.finished:
            return gone
        try:
            written = self._process.write(data, WRITE_TIMEOUT_SECONDS)
        except ProcessGoneError:
            return gone
        if written < len(data):
            return (
                f"only {written} of {len(data)} bytes of input were written within"
                f" {WRITE_TIMEOUT_SECONDS:g}s: the process is not reading its stdin",
            )
        return ()

    def _chunk(self, yield_ms: int, lines: int, warnings: Sequence[str]) -> ExecChunk:
        lines = lines if lines > 0 else DEFAULT_POLL_LINES
        with self._lock:
            deadline = time.monotonic() + min(yield_ms, MAX_YIELD_MS) / 1000
            self._stream.wait(deadline, lines)
            taken = self._stream.take(lines)
            notes = list(warnings)
            if not self._stdin_warnings_shown:
                self._stdin_warnings_shown = True
                notes[:0] = self._stdin_warnings
            if taken.dropped:
                notes.append(
                    f"{taken.dropped} bytes of output were dropped before a call read them"
                    f" (at most {UNREAD_CAP_BYTES} unread bytes are kept); poll more often or"
                    " write less output"
                )
            status = EXITED if taken.finished else RUNNING
            result = None
            if taken.finished and not self._result_reported:
                result = self.result
                self._result_reported = True
            return ExecChunk(
                session_id=self.id,
                status=status,
                output=taken.text,
                offset=taken.offset,
                next_offset=taken.next_offset,
                exit_code=self._stream.exit_code if taken.finished else None,
                interaction=detect_interaction(status, taken.text),
                result=result,
                warnings=tuple(notes),
            )

    def kill(self) -> str:
        """Kill every process of the command: ``"killed"``, or ``"exited"`` if it had ended."""
        status = EXITED if self._stream.finished else KILLED
        self._process.kill()
        return status

    def __repr__(self) -> str:
        return f"<ExecSession {self.id} {self.status} {self.command!r}>"


class ExecSessions:
    """The interactive sessions of one workspace, by id."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._sessions: dict[str, ExecSession] = {}
        self._started = 0
        self._lock = threading.Lock()
        self._closed = False

    def reserve(self) -> str:
        """The id of the next session; refused when the workspace holds too many."""
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                raise WorkspaceError(
                    f"this workspace already holds {MAX_SESSIONS} skill_exec sessions; end one"
                    " with skill_kill_session before starting another"
                )
            self._started += 1
            return session_id_for(self._started)

    def add(self, session: ExecSession) -> None:
        """Hold ``session``; once :meth:`close` has run (the workspace closed while the session
        started), kill it instead and raise :class:`WorkspaceError`."""
        with self._lock:
            if not self._closed:
                self._sessions[session.id] = session
                return
        session.kill()
        raise WorkspaceError(f"workspace {self._workspace.path} is closed")

    def get(self, session_id: str) -> ExecSession:
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSessionError.about(session_id)
        return session

    def kill(self, session_id: str) -> str:
        """Kill a session's processes and forget it; :meth:`ExecSession.kill`'s status."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise UnknownSessionError.about(session_id)
        return session.kill()

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def close(self) -> None:
        """Kill every session (the workspace is closing); the first failure is raised after."""
        with self._lock:
            self._closed = True
            sessions = list(self._sessions.values())
            self._sessions.clear()
        run_all(session.kill for session in sessions)

    def __len__(self) -> int:
        return len(self._sessions)


def session_id_for(number: int) -> str:
    """The id of a workspace's ``number``-th session: a version-4 UUID in form, made from a
    counter so that a replayed conversation sees the ids it recorded."""
    return f"00000000-0000-4000-8000-{number:012x}"
