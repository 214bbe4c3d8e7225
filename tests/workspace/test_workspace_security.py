"""Security properties of the runtimes: skill tree, network, escapes, orphans, caps, secrets."""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import os
import resource
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import (
    STREAM_CAP_BYTES,
    Runtime,
    Workspace,
    WorkspacePathError,
    create_runtime,
)
from tests.support.workspace import make_skill, runtime, skill, work_root, workspace  # noqa: F401

GIB = 1024**3


def test_inputs_are_read_only_to_commands(
    runtime: Runtime, workspace: Workspace, skill: Skill
) -> None:
    (data,) = workspace.put_inputs({"data.txt": "original"})

    result = workspace.run(skill, "echo changed > inputs/data.txt")

    assert stat.S_IMODE(data.stat().st_mode) == 0o444
    if runtime.name == "local" and os.geteuid() == 0:
        # Documented limit: chmod a-w does not bind root; the local runtime is not a sandbox.
        assert result.exit_code == 0
        return
    assert result.exit_code != 0
    assert data.read_text() == "original"


@pytest.fixture
def tcp_server() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on 0.0.0.0 recording what each connection sends."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen()
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                received.append(connection.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join(2)
    server.close()


def _host_addresses() -> list[str]:
    addresses = {"127.0.0.1"}
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks a route
        addresses.add(probe.getsockname()[0])
        probe.close()
    except OSError:
        pass
    return sorted(addresses)


def test_sandboxed_command_cannot_reach_a_host_tcp_server(
    runtime: Runtime, workspace: Workspace, skill: Skill, tcp_server: tuple[int, list[bytes]]
) -> None:
    port, received = tcp_server
    probes = [
        f"(exec 3<>/dev/tcp/{address}/{port} && echo ping >&3) 2>/dev/null"
        f" && echo reached-{address}"
        for address in _host_addresses()
    ]

    result = workspace.run(skill, "; ".join(probes) + "; true", timeout=20)

    if runtime.name == "local":
        # Positive control: the probe works, so the sandbox/docker results below mean something.
        assert "reached-127.0.0.1" in result.stdout
        return
    assert "reached" not in result.stdout
    time.sleep(0.3)
    assert received == []


def test_output_globs_and_symlinks_cannot_escape(workspace: Workspace, skill: Skill) -> None:
    command = (
        "ln -s /etc/passwd out/passwd && ln -s / out/root && ln -s ../.. out/up"
        " && mkfifo out/pipe && ln -s nowhere out/dangling && echo ok > out/fine.txt"
    )

    result = workspace.run(
        skill,
        command,
        output_files=[
            "out/*",
            "out/root/etc/hostname",
            "out/up/**/*",
            "../*",
            "/etc/passwd",
            "$OUTPUT_DIR/../../*",
        ],
    )

    assert [f.name for f in result.output_files] == ["out/fine.txt"]
    warnings = "\n".join(result.warnings)
    assert (
        "output file 'out/passwd' (pattern 'out/*') resolves outside the workspace to '/etc/passwd'"
        in warnings
    )
    assert "'out/root/etc/hostname'" in warnings
    assert "output_files pattern '../*' climbs out of the workspace with '..'; ignored" in warnings
    assert "output_files pattern '/etc/passwd' is outside the workspace; ignored" in warnings
    assert "pattern '$OUTPUT_DIR/../../*' is outside the workspace; ignored" in warnings
    assert "pattern 'out/up/**/*': folder 'out/up' resolves outside the workspace" in warnings
    assert "root:" not in repr(result.to_dict())


@pytest.mark.parametrize("stage_mode", ["link", "copy"])
def test_a_link_out_of_the_skill_never_brings_host_files_into_the_workspace(
    runtime: Runtime,
    work_root: Path,
    tmp_path: Path,
    stage_mode: str,
    request: pytest.FixtureRequest,
) -> None:
    """``docs -> shared/docs`` (a folder of the skill) is staged and read; a folder and a file
    linked outside the skill are never followed, under every runtime and stage mode: as the
    validator says (reference-outside), only the skill folder is staged.  A copy leaves them
    out and each run says so; a link stage keeps them, and they do not resolve there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("HOST-SECRET\n")
    skill = make_skill(tmp_path / "skills", "linking", {"shared/docs/guide.md": "# Guide\n"})
    (skill.directory / "docs").symlink_to("shared/docs", target_is_directory=True)
    (skill.directory / "ext").symlink_to(outside, target_is_directory=True)
    (skill.directory / "creds.md").symlink_to(outside / "secret.txt")
    if stage_mode == "copy":
        runtime = create_runtime(runtime.name, work_root=work_root, stage_mode="copy")
    copied = stage_mode == "copy" or runtime.copies_skills
    with runtime.create_workspace(request.node.name) as workspace:
        staged = workspace.stage_skill(skill)
        docs_link = os.readlink(staged.target / "docs")
        result = workspace.run(skill, "cat docs/guide.md; cat ext/secret.txt; cat creds.md")

    assert result.stdout == "# Guide\n"
    assert "HOST-SECRET" not in result.stdout + result.stderr
    assert result.exit_code != 0  # cat found neither outside file
    if copied:
        assert docs_link == "shared/docs"  # inside the copy, never back to the source
        assert staged.left_out == ("creds.md", "ext")
        assert result.warnings == (
            "the copy of 'linking' in the workspace leaves out creds.md, ext: a symbolic link"
            " leading outside the skill folder is never followed (nothing outside it reaches the"
            " workspace); copy what it points to into the skill",
        )
    else:
        assert docs_link == str(skill.directory.resolve() / "docs")
        assert staged.left_out == ()
        assert result.warnings == ()


def test_a_cwd_through_a_symlink_cannot_create_folders_outside(
    workspace: Workspace, skill: Skill, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    made = workspace.run(skill, f"ln -s {outside} $WORK_DIR/link")
    assert made.exit_code == 0, made.stderr

    with pytest.raises(WorkspacePathError) as error:
        workspace.run(skill, "pwd", cwd="$WORK_DIR/link/new")

    assert str(error.value) == (
        f"cwd '$WORK_DIR/link/new' resolves to {str(outside / 'new')!r}, outside the workspace"
        f" {str(workspace.path)!r}; use a path relative to the skill folder or one starting with"
        " $WORK_DIR, $OUTPUT_DIR or $SKILLS_DIR"
    )
    assert list(outside.iterdir()) == []


def _heartbeat_stops(beat: Path) -> bool:
    """True when the heartbeat file stops changing (its writer is dead)."""
    first = beat.read_text() if beat.exists() else ""
    time.sleep(0.6)
    return (beat.read_text() if beat.exists() else "") == first


@pytest.mark.parametrize("ending", ["timeout", "exit"])
def test_no_process_of_the_command_survives_the_result(
    workspace: Workspace, skill: Skill, ending: str
) -> None:
    heartbeat = '(while :; do date +%s%N > "$WORK_DIR/beat"; sleep 0.1; done) & '
    tail = "sleep 60" if ending == "timeout" else "sleep 0.5; exit 0"

    result = workspace.run(
        skill, heartbeat + "nohup sleep 120 >/dev/null 2>&1 & " + tail, timeout=2
    )

    assert result.timed_out is (ending == "timeout")
    beat = workspace.path / "work" / "beat"
    assert beat.exists()
    assert _heartbeat_stops(beat)


def test_a_gibibyte_of_output_is_capped_with_bounded_memory(
    workspace: Workspace, skill: Skill
) -> None:
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux

    result = workspace.run(
        skill, f"head -c {GIB} /dev/zero; head -c {GIB // 64} /dev/zero >&2", timeout=240
    )

    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert (result.exit_code, result.stdout_bytes, result.stderr_bytes) == (0, GIB, GIB // 64)
    assert (len(result.stdout), result.stdout_truncated) == (STREAM_CAP_BYTES, True)
    assert (peak_after - peak_before) * 1024 < 64 * 1024 * 1024


def test_host_secrets_do_not_reach_the_command(
    workspace: Workspace, skill: Skill, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-host-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-host-secret")

    leaked = workspace.run(skill, "env; cat /proc/self/environ")
    asked = workspace.run(skill, 'echo "$OPENAI_API_KEY"', env={"OPENAI_API_KEY": "sk-given"})

    assert "host-secret" not in leaked.stdout
    assert asked.stdout == "sk-given\n"


_STDIN_PROBE = """
import sys
from pathlib import Path
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import create_runtime
with create_runtime(sys.argv[1], work_root=Path(sys.argv[3])) as runtime:
    workspace = runtime.create_workspace("stdin")
    result = workspace.run(Skill.load(sys.argv[2]), "head -c 20", timeout=10)
    print(repr(result.stdout), result.timed_out)
"""


@pytest.mark.parametrize("kind", ["local", "sandbox"])
def test_the_host_stdin_is_not_inherited(kind: str, skill: Skill, tmp_path: Path) -> None:
    if kind == "sandbox":
        from tests.support.workspace import get_runtime

        get_runtime("sandbox", tmp_path)  # skips (or fails in CI) without bubblewrap
    probe = subprocess.run(
        [sys.executable, "-c", _STDIN_PROBE, kind, str(skill.directory), str(tmp_path)],
        input=b"SECRET-ON-HOST-STDIN\n",
        capture_output=True,
        timeout=60,
        check=True,
    )

    assert probe.stdout.decode() == "'' False\n"


_ARTIFACT_PROBE = """
import resource, sys
from pathlib import Path
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import create_runtime
mib = int(sys.argv[3])
with create_runtime("local", work_root=Path(sys.argv[2])) as runtime:
    workspace = runtime.create_workspace("artifacts")
    command = (
        f"head -c {mib * 1024 * 1024} /dev/zero | tr '\\\\0' a > out/saved.txt"
        f" && truncate -s {4 * mib}M out/too-big.bin"
    )
    result = workspace.run(Skill.load(sys.argv[1]), command, output_files=["out/*"],
                           save_as_artifacts=True)
    saved = workspace.path / "artifacts" / "0" / "out" / "saved.txt"
    print(result.exit_code, [a.name for a in result.artifact_files], saved.stat().st_size)
    for warning in result.warnings:
        print(warning)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_artifacts_and_outputs_are_streamed_within_their_caps(skill: Skill, tmp_path: Path) -> None:
    from pytest_agent_skills.workspace import ARTIFACT_CAP_BYTES, INLINE_FILE_CAP_BYTES

    def probe(mib: int) -> tuple[list[str], int]:
        done = subprocess.run(
            [sys.executable, "-c", _ARTIFACT_PROBE, str(skill.directory), str(tmp_path), str(mib)],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        *lines, peak = done.stdout.splitlines()
        return lines, int(peak) * 1024  # ru_maxrss is in KiB

    small_lines, small_peak = probe(1)
    big = (ARTIFACT_CAP_BYTES // (1024 * 1024)) - 4  # fits the artifact cap; 4x that does not
    lines, peak = probe(big)

    assert small_lines == ["0 ['out/saved.txt', 'out/too-big.bin'] 1048576"]
    assert lines[0] == f"0 ['out/saved.txt'] {big * 1024 * 1024}"
    assert lines[1:] == [
        f"output file 'out/saved.txt' is {big * 1024 * 1024} bytes; inline content cut at"
        f" {INLINE_FILE_CAP_BYTES} bytes",
        f"output file 'out/too-big.bin' ({4 * big * 1024 * 1024} bytes) not saved as an artifact:"
        f" the artifacts of one run are capped at {ARTIFACT_CAP_BYTES} bytes",
    ]
    # Memory: the inline cap (4 MiB, decoded) and 1 MiB copy chunks, not the files (60+240 MiB).
    assert peak - small_peak < 24 * 1024 * 1024
