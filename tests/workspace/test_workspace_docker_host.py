"""The docker runtime against the engine ``DOCKER_HOST`` names, as the Docker SDK reads it.

The engine here is this machine's, reached through a forward the test starts (a loopback TCP
port, or another Unix socket path) - the ways a CI job or a rootless setup names its engine.
An engine that does not see this machine's files is detected, not silently given empty mounts.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from pytest_agent_skills.workspace import WorkspaceError
from tests.support.workspace import get_runtime, make_skill

pytestmark = pytest.mark.docker


def engine_socket() -> str:
    """The Unix socket of this machine's engine (what DOCKER_HOST names, else the default)."""
    named = os.environ.get("DOCKER_HOST", "")
    if named and not named.startswith("unix://"):
        pytest.skip(f"the forward needs a Unix socket upstream, DOCKER_HOST is {named!r}")
    return urlparse(named).path if named else "/var/run/docker.sock"


class Forward:
    """Accepts connections on ``listener`` and pipes each to the engine's Unix socket.

    With ``late_reader``, it passes on an upgraded exec stream's response headers only together
    with the stream's first bytes: what a client on a loaded machine finds when it comes to read
    the headers after the command has printed (counted in :attr:`joined`).
    """

    def __init__(self, listener: socket.socket, upstream: str, late_reader: bool = False) -> None:
        self.listener = listener
        self.upstream = upstream
        self.late_reader = late_reader
        self.connections = 0
        self.joined = 0
        self._connections: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.upstream)
            self._connections += [client, engine]
            answers = self._pipe_late if self.late_reader else _pipe
            threading.Thread(target=_pipe, args=(client, engine), daemon=True).start()
            threading.Thread(target=answers, args=(engine, client), daemon=True).start()

    def _pipe_late(self, source: socket.socket, target: socket.socket) -> None:
        held = b""
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                held += chunk
                if held.startswith(b"HTTP/1.1 101 "):
                    if not held.partition(b"\r\n\r\n")[2]:
                        continue  # the headers alone: wait for the stream's first bytes
                    self.joined += 1
                target.sendall(held)
                held = b""
            target.sendall(held)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.listener.close()

    def cut(self) -> None:
        """The engine goes away: no new connection, and the open ones are cut."""
        self.close()
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


def _pipe(source: socket.socket, target: socket.socket) -> None:
    """Copy one direction; at its end, pass the end on (half-close), as a TCP proxy does."""
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            target.sendall(chunk)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


@pytest.fixture(params=["tcp", "unix"])
def docker_host(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Forward]:
    yield from forward_docker_host(request.param, tmp_path, monkeypatch)


@pytest.fixture
def late_reading_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Forward]:
    yield from forward_docker_host("unix", tmp_path, monkeypatch, late_reader=True)


def forward_docker_host(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late_reader: bool = False
) -> Iterator[Forward]:
    """DOCKER_HOST set to a forward (``kind`` ``tcp`` or ``unix``) to this machine's engine."""
    get_runtime("docker", tmp_path)  # skips (fails in CI) without an engine
    upstream = engine_socket()
    if kind == "tcp":
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    else:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = tmp_path / "engine.sock"
        listener.bind(str(path))
        address = f"unix://{path}"
    listener.listen(64)
    forward = Forward(listener, upstream, late_reader)
    monkeypatch.setenv("DOCKER_HOST", address)
    yield forward
    forward.close()


def test_the_engine_named_by_docker_host_runs_the_commands(
    docker_host: Forward, tmp_path: Path
) -> None:
    from pytest_agent_skills.workspace.docker_runtime import DockerRuntime

    skill = make_skill(tmp_path / "skills")
    with DockerRuntime(work_root=tmp_path / "work") as runtime:
        assert runtime.engine == os.environ["DOCKER_HOST"]
        workspace = runtime.create_workspace("docker-host")
        done = workspace.run(skill, "bash scripts/hello.sh there > out/a.txt; cat out/a.txt")
        late = workspace.run(skill, "(sleep 600 &); echo started; sleep 600", timeout=3)
        workspace.close()

    assert (done.exit_code, done.stdout) == (0, "hello there\n")
    assert (late.timed_out, late.stdout) == (True, "started\n")
    assert docker_host.connections > 0


def test_output_read_along_with_the_response_headers_is_kept(
    late_reading_host: Forward, tmp_path: Path
) -> None:
    """The Docker SDK reads an exec's stream from the socket under the buffered reader that
    read the response headers: output already in that buffer was lost (empty stdout, status 0)."""
    from pytest_agent_skills.workspace.docker_runtime import DockerRuntime

    skill = make_skill(tmp_path / "skills")
    with DockerRuntime(work_root=tmp_path / "work") as runtime:
        workspace = runtime.create_workspace("late-reader")
        done = workspace.run(skill, 'echo "hi/renamed"; echo "to stderr" >&2; exit 3')
        session = workspace.exec(skill, "printf 'Now? '; read x; echo \"got $x\"")
        asked = session.poll(60_000)
        session.write("it", submit=True, yield_ms=60_000)
        while session.result is None:
            session.poll(2_000)
        workspace.close()

    assert (done.exit_code, done.stdout, done.stderr) == (3, "hi/renamed\n", "to stderr\n")
    assert (asked.output, session.result.stdout) == ("Now? ", "Now? got it\n")
    assert late_reading_host.joined >= 2  # both execs' output came with their headers


def test_an_engine_that_stops_answering_is_a_workspace_error(
    docker_host: Forward, tmp_path: Path
) -> None:
    from pytest_agent_skills.workspace.docker_runtime import DockerRuntime

    skill = make_skill(tmp_path / "skills")
    with DockerRuntime(work_root=tmp_path / "work") as runtime:
        workspace = runtime.create_workspace("engine-gone")
        docker_host.cut()  # the engine (here its forward) goes away; no container is made
        errors = []
        for start in (workspace.run, workspace.exec):
            with pytest.raises(WorkspaceError) as error:
                start(skill, "true")
            errors.append(str(error.value))
        workspace.close()

    for message in errors:
        assert re.fullmatch(
            re.escape(f"the Docker engine ({os.environ['DOCKER_HOST']}) stopped answering: ")
            + r".*Connection refused.*; check that it runs \('docker info'\) and run again",
            message,
        ), message



@pytest.fixture
def unix_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Forward]:
    yield from forward_docker_host("unix", tmp_path, monkeypatch)


def test_an_engine_that_stops_answering_before_the_exit_status_is_a_workspace_error(
    unix_host: Forward, tmp_path: Path
) -> None:
    """The output stream ends (the engine went away mid-run); reading the exit status then
    fails: the runtime's error, not the HTTP client's."""
    from pytest_agent_skills.workspace.docker_runtime import DockerRuntime

    skill = make_skill(tmp_path / "skills")
    with DockerRuntime(work_root=tmp_path / "work") as runtime:
        workspace = runtime.create_workspace("engine-gone-mid-run")
        started = workspace.layout.out / "started"

        def cut_once_started() -> None:
            while not started.exists():
                threading.Event().wait(0.05)
            unix_host.cut()

        cutter = threading.Thread(target=cut_once_started, daemon=True)
        cutter.start()
        with pytest.raises(WorkspaceError) as error:
            workspace.run(skill, "touch out/started; sleep 60", timeout=120)
        cutter.join(5)
        address = urlparse(os.environ["DOCKER_HOST"]).path
        os.unlink(address)  # the engine is back: the workspace's container can be removed
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(address)
        listener.listen(8)
        back = Forward(listener, unix_host.upstream)
        try:
            workspace.close()
        finally:
            back.close()

    assert re.fullmatch(
        re.escape(f"the Docker engine ({os.environ['DOCKER_HOST']}) stopped answering: ")
        + r".*Connection refused.*; check that it runs \('docker info'\) and run again",
        str(error.value),
    ), str(error.value)


_INVISIBLE_WORKSPACE = """
import sys
from pathlib import Path
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import WorkspaceError, create_runtime
with create_runtime("docker", work_root=Path(sys.argv[2])) as runtime:
    workspace = runtime.create_workspace("invisible")
    try:
        if sys.argv[3] == "run":
            workspace.run(Skill.load(sys.argv[1]), "true")
        else:
            session = workspace.exec(Skill.load(sys.argv[1]), "true")
            while session.result is None:
                session.poll(2_000)
            print("exited", session.result.exit_code, session.result.stderr)
    except WorkspaceError as error:
        print(type(error).__name__, error)
"""


@pytest.mark.parametrize("start", ["run", "exec"])
def test_an_engine_that_does_not_see_this_machines_files_is_named(
    tmp_path: Path, start: str
) -> None:
    """The workspace lives on a tmpfs only this process's mount namespace sees: to the engine
    it is what a remote machine's engine would find - nothing.  An interactive session says so
    as a run does (it exited with the wrapper's status 97)."""
    get_runtime("docker", tmp_path)
    if os.geteuid() != 0:
        pytest.skip("a private mount namespace with a tmpfs needs root here")
    skill = make_skill(tmp_path / "skills")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    script = 'mount -t tmpfs tmpfs "$1" && exec "$2" -c "$3" "$4" "$1" "$5"'

    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            str(hidden),
            sys.executable,
            _INVISIBLE_WORKSPACE,
            str(skill.directory),
            start,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )

    name, _, message = done.stdout.strip().partition(" ")
    assert name == WorkspaceError.__name__, done.stdout + done.stderr
    assert re.fullmatch(
        r"the Docker engine \(.+\) does not see this machine's files: the workspace "
        + re.escape(str(hidden))
        + r"/ws_invisible_\d+ is empty inside its containers\. The docker runtime bind-mounts the"
        r" workspace at its host path, so it needs an engine running on this machine"
        r" \(DOCKER_HOST may name another socket or a TCP forward to it, not a remote machine\)",
        message,
    ), message


def test_a_run_does_not_need_the_metadata_file_that_another_run_is_replacing(
    tmp_path: Path,
) -> None:
    """metadata.json is replaced after a run collects outputs (unlinked, then renamed in): a run
    starting at that moment, or a user's command deleting it, is not taken for an engine that
    does not see this machine's files."""
    runtime = get_runtime("docker", tmp_path)
    skill = make_skill(tmp_path / "skills")
    workspace = runtime.create_workspace("no-metadata")
    try:
        workspace.run(skill, "true")  # staged: the next run writes no metadata before it starts
        workspace.layout.metadata.unlink()
        done = workspace.run(skill, "bash scripts/hello.sh there")
    finally:
        workspace.close()

    assert (done.exit_code, done.stdout, done.stderr) == (0, "hello there\n", "")
