"""The names a workspace setting may take: runtimes, stage modes, the default Docker image.

A leaf module: the package, the staging and the docker runtime all stand on it.
"""

from __future__ import annotations

RUNTIME_NAMES = ("local", "sandbox", "docker")
STAGE_MODES = ("link", "copy")
#: Built offline by ``agent-skills docker-image`` (debootstrap minbase + python3).
DEFAULT_DOCKER_IMAGE = "pytest-agent-skills/test:bookworm"
