"""An interactive command as a host process (the ``local`` and ``sandbox`` runtimes).

The process gets pipes for stdin, stdout and stderr, or with ``tty`` one
pseudo-terminal for all three (24x80; its echo and ``\\r\\n`` are what a
terminal shows).  It is a :class:`~.process.HostProcessTree`, as a run's
command is, and a reader thread supervises it exactly as a ``run`` is
supervised (:func:`~.process.supervise`): output into the stream, the timeout,
and when the command's shell ends, every process it started killed
(:func:`~.process.kill_tree`: its PID namespace, or its process group and the
``/proc`` sweep for its tag), so nothing outlives it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import struct
import subprocess
import termios
import threading
from collections.abc import Sequence
from functools import partial
from typing import IO

from .interactive import InteractiveProcess, OutputStream, ProcessGoneError, write_within
from .process import HostProcessTree, Sink, kill_tagged, supervise
from .spec import ExecSpec

TERMINAL_ROWS, TERMINAL_COLUMNS = 24, 80


class HostProcess(InteractiveProcess):
    """``argv`` (which runs ``spec.command``) as a host process with its stdin open."""

    def __init__(
        self,
        argv: Sequence[str],
        spec: ExecSpec,
        stream: OutputStream,
        *,
        tty: bool,
        sweep: bool = False,
    ) -> None:
        self._stream = stream
        self._write_lock = threading.Lock()
        self._files: list[IO[bytes]] = []
        sinks: dict[int, Sink]
        start = partial(HostProcessTree.start, argv, cwd=spec.cwd, env=spec.env, sweep=sweep)
        if tty:
            master, slave = pty.openpty()
            size = struct.pack("HHHH", TERMINAL_ROWS, TERMINAL_COLUMNS, 0, 0)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
            try:
                self._tree = start(stdin=slave, output=slave)
            except BaseException:
                os.close(master)
                raise
            finally:
                os.close(slave)
            self._input: int | None = master
            self._owned_fd: int | None = master
            sinks = {master: partial(stream.feed, "stdout")}
        else:
            self._tree = start(stdin=subprocess.PIPE, output=subprocess.PIPE)
            process = self._tree.popen
            stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
            assert stdin is not None and stdout is not None and stderr is not None
            self._files = [stdin, stdout, stderr]
            self._input = stdin.fileno()
            self._owned_fd = None
            sinks = {
                stdout.fileno(): partial(stream.feed, "stdout"),
                stderr.fileno(): partial(stream.feed, "stderr"),
            }
        os.set_blocking(self._input, False)
        self.reader = threading.Thread(
            target=self._supervise, args=(sinks, spec.timeout), name="skills-exec", daemon=True
        )
        self.reader.start()

    def _supervise(self, sinks: dict[int, Sink], timeout: float) -> None:
        exit_code, timed_out = -1, False
        try:
            exit_code, timed_out = supervise(self._tree.popen, sinks, timeout, kill=self._tree.kill)
        finally:
            self._tree.kill()
            if self._tree.sweep:  # a leftover the first sweep missed (the group id is not ours)
                kill_tagged(self._tree.tag)
            self._close()
            self._stream.finish(exit_code, timed_out)

    def _close(self) -> None:
        with self._write_lock:
            self._input = None
            for file in self._files:
                file.close()
            if self._owned_fd is not None:
                os.close(self._owned_fd)
                self._owned_fd = None

    def write(self, data: bytes, timeout: float) -> int:
        with self._write_lock:
            if self._input is None:
                raise ProcessGoneError
            return write_within(self._input, self._send, data, timeout)

    def _send(self, data: bytes) -> int:
        try:
            return os.write(self._input, data)  # type: ignore[arg-type]
        except OSError as error:  # EPIPE: no reader left; EIO: the terminal is gone
            if error.errno in (errno.EPIPE, errno.EIO):
                raise ProcessGoneError from None
            raise

    def terminate(self) -> None:
        self._tree.kill()

    def __repr__(self) -> str:
        return f"<HostProcess {self._tree.popen.pid}>"
