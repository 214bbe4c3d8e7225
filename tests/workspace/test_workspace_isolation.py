"""What no command can do, under every runtime, as root and (``test_as_a_normal_user``) as a
normal user: change the user's skill folder, leave a process behind, read the test process's
secrets (where the runtime isolates), reach a Unix socket of the host (sandbox, docker).

The local runtime runs twice: with its PID namespace (root or user namespaces) and without
(``local-process-group``, what a machine without either gets).
"""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import hashlib
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import Runtime, Workspace
from tests.support.workspace import (  # noqa: F401
    ISOLATION_PARAMS,
    LOCAL_PROCESS_GROUP,
    any_runtime,
    get_runtime,
    make_skill,
    work_root,
)


@pytest.fixture
def workspace(any_runtime: Runtime, request: pytest.FixtureRequest) -> Iterator[Workspace]:
    with any_runtime.create_workspace(request.node.name) as opened:
        yield opened


def kind_of(runtime: Runtime) -> str:
    return LOCAL_PROCESS_GROUP if getattr(runtime, "sweep", False) else runtime.name


# --- the skill folder ---------------------------------------------------------------------------


def tree_state(folder: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry of ``folder``: its kind, permission bits and content hash or link target."""
    state = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            value = ("link", 0, os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            value = ("dir", stat.S_IMODE(info.st_mode), "")
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            value = ("file", stat.S_IMODE(info.st_mode), digest)
        state[path.relative_to(folder).as_posix()] = value
    return state


@pytest.fixture
def linked_skill(tmp_path: Path) -> Skill:
    """A skill with docs, an executable script, symlinks (relative and absolute) into itself,
    and symlinks to files and a folder of the user's outside the skill (``shared/``)."""
    skill = make_skill(
        tmp_path / "skills",
        "linked",
        {"docs/format.md": "# Format\n", "data/table.csv": "a,b\n1,2\n"},
    )
    folder = skill.directory
    (folder / "scripts" / "hello.sh").chmod(0o755)
    os.symlink("docs/format.md", folder / "relative-link.md")
    os.symlink(folder.resolve() / "SKILL.md", folder / "absolute-link.md")
    os.symlink(folder.resolve() / "data", folder / "data-link")
    shared = tmp_path / "shared"
    (shared / "folder").mkdir(parents=True)
    (shared / "doc.md").write_text("# Shared\n")
    (shared / "folder" / "notes.txt").write_text("notes\n")
    os.symlink("../../shared/doc.md", folder / "shared-relative.md")
    os.symlink(shared.resolve() / "doc.md", folder / "shared-absolute.md")
    os.symlink(shared.resolve() / "folder", folder / "shared-folder")
    (shared / "folder").chmod(0o555)  # a chmod through a link would show in its mode
    return skill


#: A warning of each run of ``linked_skill`` from a copy: its links to ``shared/`` are left out.
LEFT_OUT = (
    "the copy of 'linked' in the workspace leaves out shared-absolute.md, shared-folder,"
    " shared-relative.md: a symbolic link leading outside the skill folder is never followed"
    " (nothing outside it reaches the workspace); copy what it points to into the skill"
)


def users_files(skill: Skill) -> dict[str, dict[str, tuple[str, int, str]]]:
    """The skill folder and the user's files its links lead to, entry by entry."""
    return {
        "skill": tree_state(skill.directory),
        "shared": tree_state(skill.directory.parent.parent / "shared"),
    }


HOSTILE_COMMANDS = [
    "echo x > SKILL.md",
    "echo x >> scripts/hello.sh",
    "truncate -s 0 docs/format.md",
    "python3 -c \"open('SKILL.md', 'r+b').write(b'X')\"",  # in place: what hard links let through
    "rm -f docs/format.md",
    "rm -rf scripts data",
    "mv SKILL.md moved.md",
    "chmod 000 SKILL.md; chmod 777 scripts/hello.sh docs",
    "touch new-file; mkdir new-folder",
    "echo x > relative-link.md; echo x > absolute-link.md; echo x > data-link/table.csv",
    "ln -sf /etc/hostname SKILL.md; rm -f absolute-link.md",
    'echo x > "$(readlink -f SKILL.md)"; echo x > "$(readlink -f data-link)/table.csv"',
    'cd "$(readlink -f data)" && echo x > table.csv',
    "find . -exec touch {} +",
    "echo x > shared-relative.md; echo x >> shared-absolute.md; echo x > shared-folder/notes.txt",
    "touch shared-folder/new; chmod 000 shared-absolute.md; mv shared-folder/notes.txt moved.txt",
    'echo x > "$(readlink -f shared-absolute.md)"; rm -rf "$(readlink -f shared-folder)"',
    # Links to the user's files where the test process re-stages and removes the copy.
    'chmod u+w . docs scripts; rm -rf docs scripts SKILL.md; ln -s "$SOURCE/docs" docs;'
    ' ln -s "$SHARED/folder" scripts; ln -s "$SOURCE/SKILL.md" SKILL.md; ln -s "$SHARED" up',
]


def assert_no_command_changes_the_users_files(workspace: Workspace, skill: Skill) -> None:
    before = users_files(skill)
    paths = {
        "SOURCE": str(skill.directory.resolve()),
        "SHARED": str(skill.directory.parent.parent.resolve() / "shared"),
    }

    results = [workspace.run(skill, command, env=paths) for command in HOSTILE_COMMANDS]

    assert users_files(skill) == before
    assert all(not result.timed_out for result in results)
    # Every run starts from the skill as it is: no run sees what an earlier one did.
    assert workspace.run(skill, "cat SKILL.md docs/format.md").stdout.startswith("---\n")
    # Removing the workspace (and the links the last command left in it) follows no link.
    workspace.run(skill, HOSTILE_COMMANDS[-1], env=paths)
    workspace.close()
    assert users_files(skill) == before


def test_no_command_changes_the_users_skill_folder(
    workspace: Workspace, linked_skill: Skill
) -> None:
    assert_no_command_changes_the_users_files(workspace, linked_skill)


@pytest.fixture(params=ISOLATION_PARAMS)
def copy_staging(request: pytest.FixtureRequest, work_root: Path) -> Runtime:
    """Every runtime with ``stage_mode="copy"`` (``--skills-stage-mode=copy``)."""
    return get_runtime(request.param, work_root, stage_mode="copy")


def test_no_command_changes_the_users_skill_folder_with_copy_staging(
    copy_staging: Runtime, linked_skill: Skill, request: pytest.FixtureRequest
) -> None:
    with copy_staging.create_workspace(request.node.name) as workspace:
        assert_no_command_changes_the_users_files(workspace, linked_skill)


def test_a_write_into_the_staged_copy_is_reported_and_the_next_run_gets_a_fresh_copy(
    workspace: Workspace, linked_skill: Skill
) -> None:
    changed = workspace.run(linked_skill, "echo x >> scripts/hello.sh; touch new-file")
    fresh = workspace.run(linked_skill, "cat scripts/hello.sh; ls new-file")

    if workspace.runtime.guards_skill_tree:  # read-only mounts: the write itself fails
        assert changed.exit_code == 1
        assert "Read-only file system" in changed.stderr
        assert changed.modified_skill_files == ()
    elif os.geteuid() != 0:  # the copy is chmod a-w, which binds a normal user
        assert "Permission denied" in changed.stderr
        assert changed.modified_skill_files == ()
    else:
        assert changed.modified_skill_files == ("new-file", "scripts/hello.sh")
        assert changed.warnings == (
            "the command modified the skill tree of 'linked' in the workspace (skills/linked):"
            " new-file, scripts/hello.sh; the skill's own folder"
            f" {linked_skill.directory.resolve()} is unchanged and the next run gets a fresh"
            " copy; skills must write into $OUTPUT_DIR or $WORK_DIR",
            LEFT_OUT,
        )
    assert fresh.stdout == 'echo "hello $1"\n'
    assert "No such file or directory" in fresh.stderr


def test_a_write_to_the_sources_host_path_is_refused_or_reported(
    workspace: Workspace, linked_skill: Skill
) -> None:
    source = linked_skill.directory.resolve()
    before = tree_state(source)

    result = workspace.run(linked_skill, f"echo x >> {source}/SKILL.md && rm -rf {source}/scripts")

    if kind_of(workspace.runtime) != LOCAL_PROCESS_GROUP:
        # Read-only mounts (sandbox, docker, and the local runtime's own mount namespace), or
        # the folder is not there at all (sandbox and docker with copy staging).
        assert result.exit_code != 0
        assert tree_state(source) == before
        assert result.modified_skill_files == ()
        return
    # The documented limit of the local runtime without namespaces: a command that names the
    # host path on purpose runs as the user; the change is reported, never hidden.
    assert result.modified_skill_files == ("SKILL.md", "scripts", "scripts/hello.sh")
    assert result.warnings == (
        f"the command modified the skill's own folder {source}: SKILL.md, scripts,"
        " scripts/hello.sh; the local runtime cannot stop a command that writes to the folder's"
        " host path on purpose - use the sandbox or docker runtime",
        LEFT_OUT,
    )


# --- processes left behind ----------------------------------------------------------------------

LEAF = 'echo > "$WORK_DIR/started/$1"; exec sleep "$2"\n'
SPAWN = """\
m=$1
mkdir -p "$WORK_DIR/started"
nohup bash scripts/leaf.sh nohup ${m}1 >/dev/null 2>&1 &
setsid bash scripts/leaf.sh setsid ${m}2 </dev/null >/dev/null 2>&1 &
( ( bash scripts/leaf.sh double-fork ${m}3 </dev/null >/dev/null 2>&1 & ) & )
setsid bash -c '( bash scripts/leaf.sh setsid-double-fork "$1" & )' _ ${m}4 \\
  </dev/null >/dev/null 2>&1 &
for name in nohup setsid double-fork setsid-double-fork; do
  until [ -e "$WORK_DIR/started/$name" ]; do sleep 0.05; done
done
echo spawned
"""


@pytest.fixture
def spawner(tmp_path: Path) -> Skill:
    return make_skill(tmp_path / "skills", "spawner", {"scripts/leaf.sh": LEAF, "spawn.sh": SPAWN})


def new_marker() -> str:
    """Sleep durations no other process on the machine uses: ``1000.<random>`` + a digit."""
    return f"1000.{random.randrange(10**8):08d}"


def alive(marker: str) -> list[str]:
    """Command lines of live processes (on this machine, containers included) with ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:1] == [b"sleep"] and any(arg.startswith(marker.encode()) for arg in argv[1:]):
            found.append(" ".join(arg.decode() for arg in argv if arg))
    return found


def wait_for(condition, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_nothing_survives_a_run_that_exits(workspace: Workspace, spawner: Skill) -> None:
    marker = new_marker()

    result = workspace.run(spawner, f"bash spawn.sh {marker}", timeout=60)

    assert (result.exit_code, result.stdout) == (0, "spawned\n"), result.stderr
    assert wait_for(lambda: not alive(marker), 10), alive(marker)


def test_nothing_survives_a_timeout(workspace: Workspace, spawner: Skill) -> None:
    marker = new_marker()

    result = workspace.run(spawner, f"bash spawn.sh {marker}; sleep 600", timeout=4)

    assert (result.timed_out, result.stdout) == (True, "spawned\n"), result.stderr
    assert wait_for(lambda: not alive(marker), 10), alive(marker)


def test_closing_the_workspace_kills_a_running_command(
    workspace: Workspace, spawner: Skill
) -> None:
    marker = new_marker()
    results = []
    runner = threading.Thread(
        target=lambda: results.append(
            workspace.run(spawner, f"bash spawn.sh {marker}; sleep {marker}5", timeout=300)
        )
    )
    runner.start()
    assert wait_for(lambda: len(alive(marker)) == 5), alive(marker)

    workspace.close()
    runner.join(60)

    assert not runner.is_alive()
    assert wait_for(lambda: not alive(marker), 10), alive(marker)
    (result,) = results
    assert result.stdout == "spawned\n"
    assert "the workspace was closed while the command ran; all its processes were killed" in (
        result.warnings
    )
    assert not workspace.path.exists()


# --- secrets of the test process ----------------------------------------------------------------

READ_ENVIRONMENTS = r"""{
pid=$$
while [ "$pid" -gt 0 ] 2>/dev/null; do
  echo "== $pid"; tr '\0' '\n' < /proc/$pid/environ 2>/dev/null
  parent=0
  while read -r key value; do [ "$key" = PPid: ] && parent=$value; done < /proc/$pid/status
  pid=$parent
done
cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n'
} """


SECRET_PROBE = """
import sys
from pathlib import Path
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import create_runtime
from pytest_agent_skills.workspace.local import LocalRuntime
kind, skill, work_root, command = sys.argv[1:]
if kind == "local-process-group":
    runtime = LocalRuntime(work_root=Path(work_root), isolate=False)
else:
    runtime = create_runtime(kind, work_root=Path(work_root))
with runtime, runtime.create_workspace("secrets") as workspace:
    result = workspace.run(Skill.load(skill), command, timeout=60)
print(result.stdout, end="")
"""


def test_the_test_process_environment_is_out_of_reach(
    workspace: Workspace, linked_skill: Skill, tmp_path: Path
) -> None:
    # /proc/<pid>/environ shows the environment a process started with: the secret must be there
    # from the start, as when it is exported in the shell that runs pytest.
    secret = f"sk-host-secret-{random.randrange(10**9)}"
    kind = kind_of(workspace.runtime)
    command = READ_ENVIRONMENTS + "| grep -F OPENAI_API_KEY="

    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            SECRET_PROBE,
            kind,
            str(linked_skill.directory),
            str(tmp_path),
            command,
        ],
        env={**os.environ, "OPENAI_API_KEY": secret},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert probe.returncode == 0, probe.stderr
    if kind == LOCAL_PROCESS_GROUP:
        # The documented limit: without a PID namespace, a command reads the environment of
        # every process of its user (/proc/<ppid>/environ), the test process's included.
        assert f"OPENAI_API_KEY={secret}" in probe.stdout.splitlines()
        return
    assert secret not in probe.stdout


def test_the_local_runtime_uses_a_pid_namespace_where_the_kernel_allows_one() -> None:
    from pytest_agent_skills.workspace.local import LocalRuntime

    allowed = os.geteuid() == 0 or (
        subprocess.run(
            ["unshare", "--user", "--map-current-user", "--pid", "--fork", "true"],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )

    with LocalRuntime() as runtime:
        assert runtime.isolation == ("pid-namespace" if allowed else "process-group")
        assert runtime.isolation_tool == ("unshare" if allowed else "")


def test_the_local_runtime_refuses_bubblewrap_and_says_why() -> None:
    from pytest_agent_skills.workspace import WorkspaceError
    from pytest_agent_skills.workspace.local import LocalRuntime

    with pytest.raises(WorkspaceError) as caught:
        LocalRuntime(isolate="bwrap")

    assert str(caught.value) == (
        "isolate='bwrap': the local runtime does not use bubblewrap, whose 'bwrap --bind / /'"
        " fails a run when a host mount vanishes while it copies them (Docker's container"
        " mounts, autofs); its namespaces come from 'unshare': choose True (or 'unshare'),"
        " None or False"
    )


# --- host sockets -------------------------------------------------------------------------------

CONNECT_ALL = """
import socket, sys
for path in sys.argv[1:]:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(2)
    try:
        client.connect(path.replace("@", "\\0", 1) if path.startswith("@") else path)
    except OSError as error:
        print("refused", path, type(error).__name__)
    else:
        print("REACHED", path)
    finally:
        client.close()
"""


def host_socket_paths() -> list[str]:
    """The listening Unix sockets of this machine, from /proc/net/unix (abstract ones as @name)."""
    paths = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) == 8 and fields[5] == "01":  # state 01: listening
            paths.add(fields[7])
    return sorted(paths)


@pytest.fixture
def own_sockets() -> Iterator[list[str]]:
    """Listening sockets of our own: in host folders (/var/tmp, and /opt - a folder the sandbox
    binds - when we may write there), and an abstract one."""
    folders = [folder for folder in ("/var/tmp", "/opt") if os.access(folder, os.W_OK)]
    servers, paths, made = [], [], []
    for folder in folders:
        holder = Path(tempfile.mkdtemp(prefix="skills-socket-", dir=folder))
        made.append(holder)
        path = str(holder / "listening.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o777)
        holder.chmod(0o755)
        server.listen()
        servers.append(server)
        paths.append(path)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"skills-socket-test-{os.getpid()}-{random.randrange(10**6)}"
    abstract.bind("\0" + name)
    abstract.listen()
    servers.append(abstract)
    paths.append("@" + name)
    yield paths
    for server in servers:
        server.close()
    for holder in made:
        for child in holder.iterdir():
            child.unlink()
        holder.rmdir()


def test_no_unix_socket_of_the_host_is_reachable(
    workspace: Workspace, linked_skill: Skill, own_sockets: list[str]
) -> None:
    targets = sorted({*host_socket_paths(), *own_sockets})
    assert any(path.endswith("listening.sock") for path in targets)

    probe = workspace.run(
        linked_skill,
        'python3 -c "$PROBE" ' + " ".join(f"'{path}'" for path in targets),
        env={"PROBE": CONNECT_ALL},
        timeout=120,
    )

    assert probe.exit_code == 0, probe.stderr
    reached = [line for line in probe.stdout.splitlines() if line.startswith("REACHED")]
    if workspace.runtime.name == "local":
        # Positive control: the probe does reach our own sockets from the host side.
        assert f"REACHED {own_sockets[0]}" in reached
        return
    assert reached == []
    assert len(probe.stdout.splitlines()) == len(targets)


# --- all of the above as a normal user ----------------------------------------------------------


def test_as_a_normal_user(request: pytest.FixtureRequest) -> None:
    """This file's tests (and the path, DOCKER_HOST and removal ones) again, as an unprivileged
    uid: user namespaces instead of root, the copy's ``chmod a-w`` binding, the docker runtime
    through the socket's group."""
    from bench.support.normal_user import run_pytest_as_normal_user

    if os.geteuid() != 0:
        pytest.skip("already a normal user: the tests of this file ran as one")
    if shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.fail("running tests as a normal user needs bwrap and setpriv (util-linux)")
    project = request.config.rootpath

    files = [
        Path(__file__).with_name(name).relative_to(project).as_posix()
        for name in (
            Path(__file__).name,
            "test_workspace_paths.py",
            "test_workspace_docker_host.py",
            "test_workspace_removal.py",
        )
    ]
    inner = run_pytest_as_normal_user(
        [*files, "-q", "-rs", "-k", "not as_a_normal_user"], project=project, timeout=900
    )

    assert inner.returncode == 0, inner.stdout[-6000:] + inner.stderr[-3000:]
    summary = inner.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, inner.stdout[-3000:]


@pytest.mark.parametrize("ending", ["kill", "close"])
def test_nothing_survives_an_interactive_session(
    workspace: Workspace, spawner: Skill, ending: str
) -> None:
    marker = new_marker()
    session = workspace.exec(spawner, f"bash spawn.sh {marker}; sleep {marker}5", timeout=300)
    assert wait_for(lambda: len(alive(marker)) == 5), alive(marker)

    if ending == "kill":
        assert workspace.exec_sessions.kill(session.id) == "killed"
    else:
        workspace.close()

    assert wait_for(lambda: not alive(marker), 10), alive(marker)
