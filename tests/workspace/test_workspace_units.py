"""Runtime-independent parts: globbing, capture, staging rules, paths, unavailable engines."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from pytest_agent_skills.errors import AgentSkillsError
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import (
    RuntimeUnavailableError,
    StagingError,
    WorkspaceError,
    WorkspacePathError,
    create_runtime,
)
from pytest_agent_skills.workspace.capture import BoundedCapture
from pytest_agent_skills.workspace.globbing import translate
from pytest_agent_skills.workspace.removal import remove_tree
from tests.support.workspace import make_skill


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("out/*", "out/a.txt", True),
        ("out/*", "out/.hidden", False),
        ("out/.*", "out/.hidden", True),
        ("out/*", "out/sub/a.txt", False),
        ("out/**/*.json", "out/a.json", True),
        ("out/**/*.json", "out/x/y/a.json", True),
        ("out/**/*.json", "out/.git/a.json", False),
        ("out/**", "out/x/y", True),
        ("out/[ab].txt", "out/b.txt", True),
        ("out/[!ab].txt", "out/a.txt", False),
        ("out/?.txt", "out/ab.txt", False),
        ("out/a+b(1).txt", "out/a+b(1).txt", True),
    ],
)
def test_glob_translation(pattern: str, path: str, matches: bool) -> None:
    assert bool(translate(pattern).match(path)) is matches


def test_bounded_capture_keeps_the_head_and_drops_a_cut_character() -> None:
    capture = BoundedCapture(cap=5)
    for chunk in (b"ab", "cdé".encode(), b"more" * 1000):
        capture.feed(chunk)

    assert (capture.total, capture.truncated, capture.data()) == (4006, True, b"abcd\xc3")
    assert capture.text() == ("abcd", True)


@pytest.fixture
def local(tmp_path: Path):
    with create_runtime("local", work_root=tmp_path / "work") as runtime:
        yield runtime


def test_unsafe_skill_names_are_refused_before_anything_is_touched(local, tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "evil"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: ../../canary\ndescription: d\n---\nbody\n")
    canary = tmp_path / "work" / "canary"
    canary.mkdir(parents=True)
    (canary / "keep.txt").write_text("keep")

    with local.create_workspace("s") as workspace, pytest.raises(StagingError) as error:
        workspace.run(Skill.load(folder), "true")

    assert str(error.value) == (
        f"{folder.resolve() / 'SKILL.md'}: skill name '../../canary' cannot be a workspace folder"
        " name; use letters, digits, '.', '_' and '-' only (no '/', no '..', no leading dot)"
    )
    assert (canary / "keep.txt").read_text() == "keep"


def test_a_skill_shipping_its_own_out_folder_is_refused(local, tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills", files={"out/keep.txt": "mine"})

    with local.create_workspace("s") as workspace, pytest.raises(StagingError) as error:
        workspace.stage_skill(skill)

    assert "the skill ships its own 'out', which the workspace needs for its links" in str(
        error.value
    )
    assert (skill.directory / "out" / "keep.txt").read_text() == "mine"


def test_an_unknown_stage_mode_is_refused_when_the_runtime_is_created(tmp_path: Path) -> None:
    with pytest.raises(StagingError) as error:
        create_runtime("local", work_root=tmp_path / "w", stage_mode="hardlink")

    assert str(error.value) == "unknown stage mode 'hardlink' (choose from link, copy)"
    assert not (tmp_path / "w").exists()


def test_copy_staging_copies_and_restages_on_change(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    with create_runtime("local", work_root=tmp_path / "w", stage_mode="copy") as runtime:
        workspace = runtime.create_workspace("s")
        staged = workspace.stage_skill(skill)
        assert not (staged.target / "scripts").is_symlink()
        assert workspace.stage_skill(skill) is staged  # unchanged source: no re-stage

        (skill.directory / "scripts" / "hello.sh").write_text('echo "changed $1"\n')
        assert workspace.run(skill, "bash scripts/hello.sh x").stdout == "changed x\n"
        workspace.close()
        assert not workspace.path.exists()


def test_a_copy_falls_back_to_user_space_where_the_kernel_cannot_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """copy_file_range refused part way (other file systems): the copy starts over, whole."""
    skill = make_skill(tmp_path / "skills")
    data = os.urandom(300_000)
    (skill.directory / "scripts" / "blob.bin").write_bytes(data)
    (skill.directory / "scripts" / "blob.bin").chmod(0o750)
    kernel_copy = os.copy_file_range

    def part_then_refuse(reader: int, writer: int, count: int) -> int:
        if os.fstat(writer).st_size:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return kernel_copy(reader, writer, min(count, 1000))

    monkeypatch.setattr(os, "copy_file_range", part_then_refuse)
    with create_runtime("local", work_root=tmp_path / "w") as runtime:
        staged = runtime.create_workspace("s").stage_skill(skill)
        copy = staged.target / "scripts" / "blob.bin"
        assert copy.read_bytes() == data
        assert stat.S_IMODE(copy.stat().st_mode) == 0o550


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o000], ids="umask-{:03o}".format)
def test_a_copy_keeps_each_files_mode_without_the_write_bits(tmp_path: Path, umask: int) -> None:
    skill = make_skill(tmp_path / "skills")
    modes = {"run.sh": 0o755, "data.txt": 0o644, "private.txt": 0o600, "setuid": 0o4750}
    for name, mode in modes.items():
        (skill.directory / name).write_text(name)
        (skill.directory / name).chmod(mode)
    previous = os.umask(umask)
    try:
        with create_runtime("local", work_root=tmp_path / "w") as runtime:
            staged = runtime.create_workspace("s").stage_skill(skill)
            copied = {name: stat.S_IMODE((staged.target / name).stat().st_mode) for name in modes}
    finally:
        os.umask(previous)
    assert copied == {name: mode & ~0o222 for name, mode in modes.items()}


def test_keep_workspaces_leaves_the_folder(tmp_path: Path) -> None:
    with create_runtime("local", work_root=tmp_path, keep_workspaces=True) as runtime:
        workspace = runtime.create_workspace("keep me/1")
    assert workspace.path.is_dir()
    assert workspace.path.name.startswith("ws_keep_me_1_")


def test_deferred_metadata_is_written_by_the_next_change_or_when_kept(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "skills")
    with create_runtime("local", work_root=tmp_path / "ws", keep_workspaces=True) as runtime:
        staged = runtime.create_workspace("staged", defer_metadata=True)
        untouched = runtime.create_workspace("untouched", defer_metadata=True)
        assert not (staged.path / "metadata.json").exists()
        staged.stage_skill(skill)
        assert list(json.loads((staged.path / "metadata.json").read_text())["skills"]) == ["demo"]
        assert not (untouched.path / "metadata.json").exists()
    metadata = json.loads((untouched.path / "metadata.json").read_text())
    assert (metadata["version"], metadata["skills"], metadata["inputs"]) == (1, {}, [])


def test_inputs_and_closed_workspaces(local, tmp_path: Path) -> None:
    workspace = local.create_workspace("s")
    for bad in ("../escape.txt", "/etc/x", ""):
        with pytest.raises(WorkspaceError):
            workspace.put_inputs({bad: "x"})
    host_file = tmp_path / "host.bin"
    host_file.write_bytes(b"\x00\x01")
    (written,) = workspace.put_inputs({"copied.bin": host_file})
    assert written.read_bytes() == b"\x00\x01"
    workspace.close()

    with pytest.raises(WorkspaceError, match="is closed"):
        workspace.run(make_skill(tmp_path / "skills"), "true")


def test_errors_are_agent_skills_errors(local, tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError) as unknown:
        create_runtime("vm")
    assert str(unknown.value) == "unknown runtime 'vm' (choose from local, sandbox, docker)"
    assert isinstance(unknown.value, AgentSkillsError)
    workspace = local.create_workspace("s")
    with pytest.raises(WorkspacePathError):
        workspace.run(make_skill(tmp_path / "skills"), "pwd", cwd="/etc")
    with pytest.raises(WorkspaceError, match="is not staged in this workspace"):
        workspace.run("nope", "true")
    with pytest.raises(WorkspaceError, match="invalid environment variable name 'A=B'"):
        workspace.run(make_skill(tmp_path / "skills"), "true", env={"A=B": "x"})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"command": "echo a\x00b"}, "command must not contain NUL bytes"),
        ({"cwd": "sub\x00dir"}, "cwd must not contain NUL bytes"),
        (
            {"stdin": "\udcff"},
            "stdin is not valid Unicode text (surrogates not allowed at position 0)",
        ),
        ({"timeout": 10**30}, "timeout must be at most 86400 seconds (one day), got 10"),
        ({"timeout": float("nan")}, "timeout must be at most 86400 seconds (one day), got nan"),
    ],
)
def test_arguments_no_process_can_take_are_workspace_errors(
    local, tmp_path: Path, arguments: dict, message: str
) -> None:
    workspace = local.create_workspace("s")
    call = {"command": "true", **arguments}
    with pytest.raises(WorkspaceError) as refused:
        workspace.run(make_skill(tmp_path / "skills"), call.pop("command"), **call)
    assert str(refused.value).startswith(message)


def test_missing_engines_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeUnavailableError) as sandbox:
        create_runtime("sandbox")
    assert "needs bubblewrap ('bwrap'), not found on PATH" in str(sandbox.value)
    assert "apt-get install bubblewrap" in str(sandbox.value)

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(RuntimeUnavailableError) as docker:
        create_runtime("docker")
    assert "cannot reach the Docker engine" in str(docker.value)
    assert "apt-get install docker.io" in str(docker.value)
    assert "scripts/" not in str(docker.value)


def test_missing_docker_image_says_how_to_build_it(tmp_path: Path) -> None:
    from tests.support.workspace import get_runtime

    get_runtime("docker", tmp_path)  # skips (fails in CI) without a Docker engine
    with pytest.raises(RuntimeUnavailableError) as error:
        create_runtime("docker", image="pytest-agent-skills/no-such-image:1")
    assert str(error.value) == (
        "Docker image 'pytest-agent-skills/no-such-image:1' is not available (ImageNotFound);"
        " build the default test image offline with 'sudo agent-skills docker-image'"
        " (needs debootstrap),"
        " or set --skills-docker-image / SKILLS_DOCKER_IMAGE to an image that has bash"
    )


def test_containers_of_vanished_workspaces_are_removed(tmp_path: Path) -> None:
    from pytest_agent_skills.workspace.docker_runtime import KEEPALIVE, LABEL
    from tests.support.workspace import get_runtime

    runtime = get_runtime("docker", tmp_path)  # skips (fails in CI) without a Docker engine
    stale = runtime.client.containers.run(  # type: ignore[attr-defined]
        runtime.image,  # type: ignore[attr-defined]
        ["bash", "-c", KEEPALIVE],
        detach=True,
        network_mode="none",
        labels={LABEL: str(tmp_path / "ws_gone_1")},
    )

    # Another test process's runtime may remove it first (each cleans up at start): either way
    # it must be gone.
    runtime.remove_stale_containers()  # type: ignore[attr-defined]
    # The low-level listing: containers.list() inspects each one, racing other test processes.
    listed = runtime.client.api.containers(all=True, quiet=True)  # type: ignore[attr-defined]
    assert stale.id not in [summary["Id"] for summary in listed]


def test_a_workspace_container_removed_by_someone_else_is_replaced(tmp_path: Path) -> None:
    """``docker rm -f`` (or a prune) between two runs: the next run starts a new container
    (the files live in the workspace) instead of failing on the cached one."""
    from pytest_agent_skills.workspace.docker_runtime import LABEL
    from tests.support.workspace import get_runtime

    runtime = get_runtime("docker", tmp_path)  # skips (fails in CI) without a Docker engine
    api = runtime.client.api  # type: ignore[attr-defined]
    skill = make_skill(tmp_path / "skills")
    workspace = runtime.create_workspace("removed-container")
    mine = {"label": f"{LABEL}={workspace.path}"}
    try:
        first = workspace.run(skill, "echo kept > out/a.txt")
        [removed] = [summary["Id"] for summary in api.containers(all=True, filters=mine)]
        api.remove_container(removed, force=True)  # what 'docker rm -f' does
        second = workspace.run(skill, "cat out/a.txt")
        [replacement] = [summary["Id"] for summary in api.containers(all=True, filters=mine)]
    finally:
        workspace.close()

    assert (first.exit_code, second.exit_code, second.stdout) == (0, 0, "kept\n")
    assert replacement != removed
    assert api.containers(all=True, filters=mine) == []


def test_an_image_without_bash_gives_a_workspace_error(tmp_path: Path) -> None:
    import io
    import tarfile

    from tests.support.workspace import get_runtime

    engine = get_runtime("docker", tmp_path).client  # type: ignore[attr-defined]
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo("README")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"empty"))
    name = "pytest-agent-skills/no-bash:test"
    engine.api.import_image_from_data(archive.getvalue(), repository=name)
    try:
        with create_runtime("docker", work_root=tmp_path, image=name) as runtime:
            workspace = runtime.create_workspace("s")
            with pytest.raises(WorkspaceError) as error:
                workspace.run(make_skill(tmp_path / "skills"), "true")
        leftovers = engine.containers.list(all=True, filters={"ancestor": name})
    finally:
        engine.images.remove(name, force=True)
    assert leftovers == []
    assert str(error.value).startswith(f"cannot run the command in a container of image {name!r}:")
    assert "the image needs bash and coreutils' sleep" in str(error.value)


def test_a_commands_group_is_killed_before_its_shell_is_reaped() -> None:
    """Until the shell is reaped its pid (and so its process group id) cannot be reused: the kill
    of the group must come first, or it could hit another program's group."""
    import subprocess

    from pytest_agent_skills.workspace.process import supervise

    process = subprocess.Popen(
        ["sh", "-c", "echo done"], stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None
    seen: list[str] = []

    def kill() -> None:  # what supervise calls once the shell has exited
        try:
            with open(f"/proc/{process.pid}/stat") as stat:
                seen.append(stat.read().rsplit(")", 1)[1].split()[0])  # Z: exited, not reaped
        except FileNotFoundError:
            seen.append("reaped")

    capture = BoundedCapture(1024)
    sinks = {process.stdout.fileno(): capture.feed}
    exit_code, timed_out = supervise(process, sinks, 60, kill=kill)
    process.stdout.close()

    assert (exit_code, timed_out, capture.data()) == (0, False, b"done\n")
    assert seen == ["Z"]


def test_closing_a_kept_workspace_whose_folder_went_is_a_workspace_error(tmp_path: Path) -> None:
    runtime = create_runtime("local", work_root=tmp_path, keep_workspaces=True)
    workspace = runtime.create_workspace("kept", defer_metadata=True)
    remove_tree(workspace.path)  # what a command's 'rm -rf "$WORKSPACE_DIR"' does

    with pytest.raises(WorkspaceError) as raised:
        workspace.close()

    assert str(raised.value) == (
        f"the kept workspace {workspace.path} has no metadata.json: it cannot be written"
        " (No such file or directory); the folder was changed by a command"
    )
