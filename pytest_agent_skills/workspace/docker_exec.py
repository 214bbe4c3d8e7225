"""What a run's exec (:mod:`.docker_runtime`) and an interactive session's exec
(:mod:`.interactive_docker`) share: the wrapper each exec runs, and the removal of a container.
Both stand on this module.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from .errors import WorkspaceError

#: Exit status and stderr of the wrapper when the workspace is not visible in the container.
NOT_SHARED_STATUS = 97
NOT_SHARED = "pytest-agent-skills: workspace not visible in the container"
#: $1 command, $2 stdin file, $3 cwd, $4 the workspace's runs/ folder (every run's folder is in
#: it, so it exists from before the first run; an engine not sharing this machine's files shows
#: the workspace mount empty). Not metadata.json: it is replaced while other runs go on.
WRAPPER = (
    f'[ -d "$4" ] || {{ echo "{NOT_SHARED}" >&2; exit {NOT_SHARED_STATUS}; }}; cd "$3" || exit 1;'
    ' bash -lc "$1" <"$2"; status=$?; kill -KILL -1 2>/dev/null; exit $status'
)
KILL_ALL = ["bash", "-c", "kill -KILL -1 2>/dev/null; exit 0"]


def run_wrapper(command: str, stdin: Path | str, cwd: Path, runs: Path) -> list[str]:
    """The argv of an exec that runs ``command`` through :data:`WRAPPER` (``runs``: the
    workspace's runs/ folder)."""
    return ["bash", "-c", WRAPPER, "bash", command, str(stdin), str(cwd), str(runs)]


def remove_container(container: Any) -> None:
    """Remove ``container`` and everything running in it (gone already, or being removed by
    another process - each test process cleans up stale containers: nothing to do)."""
    try:
        container.remove(force=True)
    except Exception as error:
        if "already in progress" in str(error):  # another process's removal: wait for its end
            with contextlib.suppress(Exception):  # (gone meanwhile: the wait has nothing to do)
                container.wait(condition="removed", timeout=60)
            return
        if "No such container" not in str(error):
            raise WorkspaceError(
                f"cannot remove container {container.short_id}: {error}"
            ) from error
