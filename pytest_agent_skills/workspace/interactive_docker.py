"""An interactive command in Docker: a container of its own, one ``exec`` with stdin attached.

The session's container has the workspace's mounts (see :mod:`.docker_runtime`);
its own, because every ``run`` in the workspace's container ends by killing
every process there, and because removing it is a kill that nothing started
by the command survives (at the timeout, by ``skill_kill_session``, when the
workspace closes).  The exec runs a run's wrapper as the host user (the
workspace must be visible in the container - checked before the session starts,
so that :meth:`Workspace.exec` raises the error ``run`` raises - then ``bash -lc
COMMAND`` reads the attached stdin) and, like a run, kills the container's other processes when
the command's shell ends.  Its attached socket carries stdin one way and the output the other,
demultiplexed into stdout and stderr (with ``tty``, one terminal stream).
"""

from __future__ import annotations

import select
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from .docker_attach import Demultiplexer, ExecAttachment
from .docker_exec import remove_container, run_wrapper
from .errors import WorkspaceError
from .interactive import (
    InteractiveProcess,
    OutputStream,
    ProcessGoneError,
    wait_ready,
    write_within,
)
from .spec import ExecSpec

if TYPE_CHECKING:
    from .docker_runtime import DockerRuntime
    from .workspace import Workspace


class DockerProcess(InteractiveProcess):
    def __init__(
        self,
        runtime: DockerRuntime,
        workspace: Workspace,
        spec: ExecSpec,
        stream: OutputStream,
        *,
        tty: bool,
    ) -> None:
        from docker.errors import DockerException

        self._stream = stream
        self._api = runtime.client.api
        self._write_lock = threading.Lock()
        self._remove_lock = threading.Lock()
        self._removed = False
        self._container: Any = None
        try:
            self._container = runtime.start_container(workspace)
            runtime.check_shared(self._container, workspace)
            self._exec_id = self._api.exec_create(
                self._container.id,
                run_wrapper(spec.command, "/dev/stdin", spec.cwd, workspace.layout.runs),
                stdin=True,
                tty=tty,
                environment=spec.env,
                workdir="/",
                user=runtime.user,
            )["Id"]
            self._attachment = ExecAttachment(self._api, self._exec_id, tty=tty)
        except (DockerException, OSError, WorkspaceError) as error:
            if self._container is not None:
                remove_container(self._container)
            if isinstance(error, WorkspaceError):
                raise
            if isinstance(error, OSError):
                raise runtime.stopped_answering(error) from error
            raise WorkspaceError(
                f"cannot start the interactive command in a container of image"
                f" {runtime.image!r}: {error}"
            ) from error
        self._socket: Any = self._attachment.socket
        self._frames = Demultiplexer(stream.feed, tty)
        self._frames.feed(self._attachment.buffered())
        # Reads and writes wait in _pump and write_within, never in the socket: with the Docker
        # client's timeout (120 s) a write to a command that does not read blocked for that
        # long and then failed as if the command had exited.
        self._socket.setblocking(False)
        self.reader = threading.Thread(
            target=self._pump, args=(spec.timeout,), name="skills-exec-docker", daemon=True
        )
        self.reader.start()

    def _pump(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        timed_out = False
        exit_code = -1
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                if not wait_ready(self._socket, select.POLLIN, remaining):
                    continue
                try:
                    data = self._socket.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:  # the container was removed under us (a kill)
                    break
                if not data:
                    break
                self._frames.feed(data)
            if not timed_out:
                exit_code = self._exit_code()
        finally:
            self._remove()
            self._close_socket()
            self._stream.finish(exit_code, timed_out)

    def _exit_code(self) -> int:
        try:
            code = self._api.exec_inspect(self._exec_id).get("ExitCode")
        except Exception:  # the container is gone (killed): no exit code to report
            return -1
        return -1 if code is None else int(code)

    def _remove(self) -> None:
        with self._remove_lock:
            if not self._removed:
                self._removed = True
                remove_container(self._container)

    def _close_socket(self) -> None:
        with self._write_lock:
            if self._socket is not None:
                self._attachment.close()
                self._socket = None

    def write(self, data: bytes, timeout: float) -> int:
        with self._write_lock:
            if self._socket is None:
                raise ProcessGoneError
            return write_within(self._socket, self._send, data, timeout)

    def _send(self, data: bytes) -> int:
        try:
            sent: int = self._socket.send(data, socket.MSG_DONTWAIT)
            return sent
        except (BlockingIOError, InterruptedError):
            raise
        except OSError:  # the container is gone
            raise ProcessGoneError from None

    def terminate(self) -> None:
        self._remove()

    def __repr__(self) -> str:
        return f"<DockerProcess in container {self._container.short_id}>"
