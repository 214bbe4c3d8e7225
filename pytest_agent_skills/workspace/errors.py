"""Errors of the workspace package; all derive from :class:`AgentSkillsError`."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import AgentSkillsError


class WorkspaceError(AgentSkillsError):
    """A workspace operation failed (bad path, staging conflict, closed workspace, ...)."""


class StagingError(WorkspaceError):
    """A skill cannot be staged into the workspace (unsafe name, reserved entry, ...)."""


class WorkspacePathError(WorkspaceError):
    """A ``cwd`` or input path that would leave the workspace."""


class RuntimeUnavailableError(WorkspaceError):
    """The runtime's engine (bubblewrap, Docker) is missing or not answering."""


INSTALL_BWRAP = (
    "install bubblewrap (Debian/Ubuntu: 'apt-get install bubblewrap'; Fedora: 'dnf install"
    " bubblewrap'), or choose another runtime with --skills-runtime=local|docker"
)
INSTALL_DOCKER = (
    "install and start Docker (Debian/Ubuntu as root: 'apt-get install docker.io && dockerd &'),"
    " check that 'docker info' answers for this user, or choose another runtime with"
    " --skills-runtime=local|sandbox"
)


def run_all(actions: Iterable[Callable[[], object]]) -> None:
    """Run every action, also after one failed; the first :class:`WorkspaceError` raised is
    raised again once all have run."""
    failures: list[WorkspaceError] = []
    for action in actions:
        try:
            action()
        except WorkspaceError as error:
            failures.append(error)
    if failures:
        raise failures[0]
