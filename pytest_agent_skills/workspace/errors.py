"""Errors of the workspace package; all derive from :class:`AgentSkillsError`."""

from __future__ import annotations

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
