"""Run pytest (or any Python script) as a normal user from a root session: a fresh uid, no
capabilities.

The uid has no passwd entry (so nothing on the machine belongs to it), its
own temporary folder, and the Docker socket's group (so the docker runtime
works as for a user in the ``docker`` group).  When the interpreter or the
project lies under a folder others may not enter (``/root`` with pyenv, a
0700 home), the run gets a private mount namespace (bubblewrap, as root)
where that folder is an empty tmpfs with just the needed paths bound back
read-only; everything else is the machine's file system as it is.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

FIRST_FREE_ID = 20_000
PASSED_VARIABLES = (
    "CI",
    "PYTEST_AGENT_SKILLS_REQUIRE_SERVICES",
    "LANG",
    "LC_ALL",
    "TZ",
    "DOCKER_HOST",
)


def free_id(start: int = FIRST_FREE_ID) -> int:
    """The first number from ``start`` that is neither a user nor a group here."""
    number = start
    while True:
        try:
            pwd.getpwuid(number)
        except KeyError:
            try:
                grp.getgrgid(number)
            except KeyError:
                return number
        number += 1


def closed_ancestor(path: Path) -> Path | None:
    """The first folder on the way to ``path`` that other users may not enter, if any."""
    for folder in [*reversed(path.parents), path]:
        try:
            info = folder.stat()
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode) and not info.st_mode & stat.S_IXOTH:
            return folder
    return None


def needed_paths(project: Path) -> list[Path]:
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent}
    paths.update(Path(entry) for entry in sys.path if entry and os.path.isdir(entry))
    paths.add(project)
    return sorted(path.resolve() for path in paths)


def mount_view(paths: Iterable[Path]) -> list[str]:
    """bwrap options that make ``paths`` reachable: a tmpfs over each closed folder, binds back."""
    masks: dict[Path, list[Path]] = {}
    for path in paths:
        closed = closed_ancestor(path)
        if closed is not None:
            masks.setdefault(closed, []).append(path)
    options: list[str] = []
    for closed, inside in sorted(masks.items()):
        options += ["--perms", "0755", "--tmpfs", str(closed)]
        made: set[Path] = set()
        for path in sorted(set(inside)):
            # bwrap makes missing parents 0700; make the way to each path enterable.
            for parent in reversed(path.parents):
                if parent.is_relative_to(closed) and parent != closed and parent not in made:
                    options += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            options += ["--ro-bind", str(path), str(path)]
    return options


def docker_group() -> list[int]:
    try:
        info = os.stat("/var/run/docker.sock")
    except OSError:
        return []
    return [info.st_gid] if stat.S_ISSOCK(info.st_mode) and info.st_gid != 0 else []


def run_pytest_as_normal_user(
    arguments: Sequence[str], *, project: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGUMENTS`` in ``project`` as a fresh unprivileged uid."""
    return run_as_normal_user(
        ["-m", "pytest", *arguments, "-p", "no:cacheprovider"],
        project=project,
        timeout=timeout,
        basetemp=True,
    )


def run_as_normal_user(
    arguments: Sequence[str], *, project: Path, timeout: float, basetemp: bool = False
) -> subprocess.CompletedProcess[str]:
    """``python ARGUMENTS`` in ``project`` as a fresh unprivileged uid (``basetemp``: with a
    ``--basetemp`` of its own, for pytest)."""
    uid = free_id()
    scratch = Path(tempfile.mkdtemp(prefix="skills-normal-user-"))
    try:
        home = scratch / "home"
        home.mkdir()
        for folder in (scratch, home):
            os.chown(folder, uid, uid)
        groups = ",".join(str(gid) for gid in docker_group())
        drop = [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            f"--groups={groups}" if groups else "--clear-groups",
            "--inh-caps=-all",
        ]
        view = mount_view(needed_paths(project))
        prefix = ["bwrap", "--dev-bind", "/", "/", *view, "--"] if view else []
        environment = {name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ}
        environment.update(
            PATH=os.pathsep.join(
                [str(Path(sys.executable).parent), "/usr/sbin:/usr/bin:/sbin:/bin"]
            ),
            HOME=str(home),
            TMPDIR=str(scratch),
        )
        command = [*prefix, *drop, sys.executable, *arguments]
        if basetemp:
            command.append(f"--basetemp={scratch / 'basetemp'}")
        return subprocess.run(
            command,
            cwd=project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
