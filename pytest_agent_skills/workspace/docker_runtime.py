"""The ``docker`` runtime: one long-lived container per workspace, one ``exec`` per run.

The container (network ``none``) mounts the workspace at its host path,
``skills/`` and ``work/inputs/`` read-only on top, and each link-staged skill
source read-only at its own path.  The first run creates the container;
mounts cannot be added to a running container, so the first run after staging
a skill whose source is not mounted yet replaces it (files live in the
workspace, nothing is lost), as does a run that finds it removed by someone
else; every other run only execs.  PID 1 is a small
bash loop that reaps orphans.  Each run execs, as the host user, a wrapper
that checks the workspace is visible (an engine on another machine would
mount empty folders), runs ``bash -lc COMMAND`` and then kills every other
process of the container (``kill -KILL -1`` spares PID 1 and the caller), so
nothing the command started in the background survives it; on a timeout, or
when the workspace closes during the run, a second exec does the same.  Runs
of one workspace never overlap, and interactive sessions have containers of
their own (:mod:`.interactive_docker`).

The engine is the one the Docker SDK finds (``DOCKER_HOST``, else the local
socket); it must run on this machine, since the workspace is bind-mounted at
its host path.  The Docker SDK is imported only when this runtime is created.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .capture import BoundedCapture
from .docker_attach import Demultiplexer, ExecAttachment
from .docker_exec import KILL_ALL, NOT_SHARED, NOT_SHARED_STATUS, remove_container, run_wrapper
from .errors import INSTALL_DOCKER, RuntimeUnavailableError, WorkspaceError
from .names import DEFAULT_DOCKER_IMAGE
from .process import ProcessOutcome
from .runtime import Runtime, read_only_folders
from .spec import ExecSpec

if TYPE_CHECKING:
    from .interactive import InteractiveProcess, OutputStream
    from .workspace import Workspace

LABEL = "pytest-agent-skills.workspace"
KEEPALIVE = "trap 'exit 0' TERM; while :; do sleep 86400 & wait $!; done"


class _RunningExec:
    """A run's exec, as ``workspace.processes`` holds it: ``kill()`` ends all its processes."""

    def __init__(self, container: Any, user: str) -> None:
        self.container = container
        self.user = user

    def kill(self) -> None:
        from docker.errors import DockerException

        # The container is gone: so is the run.  The engine stopped answering (OSError): the
        # run's reader fails and says so.
        with contextlib.suppress(DockerException, OSError):
            self.container.exec_run(KILL_ALL, user=self.user)


class DockerRuntime(Runtime):
    name = "docker"

    def __init__(self, *, image: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.image = image or DEFAULT_DOCKER_IMAGE
        self.client = _connect()
        #: The engine, as DOCKER_HOST names it (what the Docker SDK connected to).
        self.engine = os.environ.get("DOCKER_HOST") or "the default socket"
        self.user = f"{os.getuid()}:{os.getgid()}"
        self._containers: dict[Path, tuple[Any, frozenset[str]]] = {}
        try:
            self.client.images.get(self.image)
        except Exception as error:
            raise RuntimeUnavailableError(
                f"Docker image {self.image!r} is not available ({error.__class__.__name__});"
                " build the default test image offline with 'sudo agent-skills docker-image'"
                " (needs debootstrap),"
                " or set --skills-docker-image / SKILLS_DOCKER_IMAGE to an image that has bash"
            ) from None
        self.remove_stale_containers()

    def remove_stale_containers(self) -> int:
        """Remove containers of ours whose workspace folder is gone (a killed test run).

        A folder this user cannot see (another user's workspace) is not gone; a
        container another process removes meanwhile is skipped.
        """
        removed = 0
        for summary in self.client.api.containers(all=True, filters={"label": LABEL}):
            folder = (summary.get("Labels") or {}).get(LABEL, "")
            if folder and not _vanished(folder):
                continue
            remove_container(self.client.containers.prepare_model({"Id": summary["Id"]}))
            removed += 1
        return removed

    def _mounts(self, workspace: Workspace) -> dict[str, dict[str, str]]:
        layout = workspace.layout
        volumes = {str(layout.root): {"bind": str(layout.root), "mode": "rw"}}
        for folder in read_only_folders(workspace):
            volumes[str(folder)] = {"bind": str(folder), "mode": "ro"}
        return volumes

    def container_for(self, workspace: Workspace) -> Any:
        """The workspace's running container, (re)created when its mounts must change."""
        volumes = self._mounts(workspace)
        wanted = frozenset(volumes)
        current = self._containers.get(workspace.path)
        if current is not None and current[1] == wanted:
            return current[0]
        if current is not None:
            remove_container(current[0])
        container = self.start_container(workspace, volumes)
        self._containers[workspace.path] = (container, wanted)
        return container

    def start_container(
        self, workspace: Workspace, volumes: dict[str, dict[str, str]] | None = None
    ) -> Any:
        """A new running container of the workspace (its mounts; PID 1 reaps orphans)."""
        container = self.client.containers.create(
            self.image,
            ["bash", "-c", KEEPALIVE],
            network_mode="none",
            volumes=volumes if volumes is not None else self._mounts(workspace),
            labels={LABEL: str(workspace.path)},
            working_dir=str(workspace.path),
        )
        try:
            container.start()
        except BaseException:
            remove_container(container)
            raise
        return container

    def start_interactive(
        self, workspace: Workspace, spec: ExecSpec, stream: OutputStream, *, tty: bool
    ) -> InteractiveProcess:
        from .interactive_docker import DockerProcess

        return DockerProcess(self, workspace, spec, stream, tty=tty)

    def execute(self, workspace: Workspace, spec: ExecSpec) -> ProcessOutcome:
        from docker.errors import DockerException, NotFound

        started = time.monotonic()
        try:
            container = self.container_for(workspace)
            try:
                exec_id = self._exec_create(container, spec, workspace)
            except NotFound:
                # Removed by someone else ('docker rm -f', a prune): the files live in the
                # workspace, so a new container carries on.
                self._containers.pop(workspace.path, None)
                container = self.container_for(workspace)
                exec_id = self._exec_create(container, spec, workspace)
        except DockerException as error:
            raise WorkspaceError(
                f"cannot run the command in a container of image {self.image!r}: {error}"
                " (the image needs bash and coreutils' sleep; see docs/workspace.md)"
            ) from error
        except OSError as error:
            raise self.stopped_answering(error) from error
        running = _RunningExec(container, self.user)
        workspace.processes.add(running)
        try:
            outcome = self._stream(running, exec_id, spec, started)
        finally:
            workspace.processes.discard(running)
        if outcome.exit_code == NOT_SHARED_STATUS and outcome.stderr.data().startswith(
            NOT_SHARED.encode()
        ):
            raise self.not_shared(workspace)
        return outcome

    def check_shared(self, container: Any, workspace: Workspace) -> None:
        """Raise :meth:`not_shared` unless the workspace is visible in ``container`` (the
        check :data:`WRAPPER` makes, for an interactive session before its command starts)."""
        visible = ["bash", "-c", '[ -d "$1" ]', "bash", str(workspace.layout.runs)]
        if container.exec_run(visible, user=self.user).exit_code != 0:
            raise self.not_shared(workspace)

    def not_shared(self, workspace: Workspace) -> WorkspaceError:
        return WorkspaceError(
            f"the Docker engine ({self.engine}) does not see this machine's files: the"
            f" workspace {workspace.path} is empty inside its containers. The docker runtime"
            " bind-mounts the workspace at its host path, so it needs an engine running on"
            " this machine (DOCKER_HOST may name another socket or a TCP forward to it, not a"
            " remote machine)"
        )

    def _exec_create(self, container: Any, spec: ExecSpec, workspace: Workspace) -> str:
        exec_id: str = self.client.api.exec_create(
            container.id,
            run_wrapper(
                spec.command, spec.stdin_path or "/dev/null", spec.cwd, workspace.layout.runs
            ),
            environment=spec.env,
            workdir="/",
            user=self.user,
        )["Id"]
        return exec_id

    def _stream(
        self, running: _RunningExec, exec_id: str, spec: ExecSpec, started: float
    ) -> ProcessOutcome:
        """Read the exec's output into bounded captures; kill its processes at the timeout."""
        api = self.client.api
        stdout, stderr = BoundedCapture(spec.cap), BoundedCapture(spec.cap)
        failure: list[BaseException] = []

        def pump() -> None:
            try:
                attachment = ExecAttachment(api, exec_id, tty=False)
                try:
                    captures = {"stdout": stdout, "stderr": stderr}
                    frames = Demultiplexer(lambda name, data: captures[name].feed(data), tty=False)
                    frames.feed(attachment.buffered())
                    attachment.socket.settimeout(None)  # a quiet command is not an error
                    while data := attachment.socket.recv(65536):
                        frames.feed(data)
                finally:
                    attachment.close()
            except BaseException as error:  # reported below, in the caller's thread
                failure.append(error)

        reader = threading.Thread(target=pump, name="skills-docker-exec", daemon=True)
        reader.start()
        reader.join(spec.timeout)
        timed_out = reader.is_alive()
        if timed_out:
            running.kill()
            reader.join(10)
        if failure:
            raise WorkspaceError(
                f"docker exec in container {running.container.short_id} failed: {failure[0]}"
            )
        exit_code = self._exit_code(running, exec_id)
        return ProcessOutcome(
            stdout=stdout,
            stderr=stderr,
            exit_code=-1 if timed_out or exit_code is None else exit_code,
            timed_out=timed_out,
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def _exit_code(self, running: _RunningExec, exec_id: str) -> int | None:
        from docker.errors import DockerException

        try:
            exit_code = self.client.api.exec_inspect(exec_id).get("ExitCode")
        except DockerException as error:
            raise WorkspaceError(
                f"cannot read the exit status of the command in container"
                f" {running.container.short_id} (removed during the run?): {error}"
            ) from error
        except OSError as error:
            raise self.stopped_answering(error) from error
        return None if exit_code is None else int(exit_code)

    def stopped_answering(self, error: OSError) -> WorkspaceError:
        """The error for a call the engine did not answer (the HTTP client's errors are
        OSErrors: the engine stopped or restarted, its socket went away)."""
        return WorkspaceError(
            f"the Docker engine ({self.engine}) stopped answering: {error}; check that it runs"
            " ('docker info') and run again"
        )

    def release(self, workspace: Workspace) -> None:
        current = self._containers.pop(workspace.path, None)
        if current is not None:
            remove_container(current[0])

    def close(self) -> None:
        super().close()
        self.client.close()


def _connect() -> Any:
    try:
        import docker
    except ImportError:  # pragma: no cover - docker is a declared dependency
        raise RuntimeUnavailableError(
            "the docker runtime needs the 'docker' Python package (pip install docker);"
            f" {INSTALL_DOCKER}"
        ) from None
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as error:
        raise RuntimeUnavailableError(
            f"cannot reach the Docker engine ({error.__class__.__name__}: {error});"
            f" {INSTALL_DOCKER}"
        ) from None
    return client


def _vanished(folder: str) -> bool:
    try:
        os.stat(folder)
    except FileNotFoundError:
        return True
    except OSError:  # not ours to judge (permission denied, ...)
        return False
    return False
