"""The settings of the runtimes skill commands run in and the :class:`RuntimeOptions` they
build: which runtime by default, where workspaces go, the Docker image, how skills are staged,
what a missing runtime does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .. import settings
from ..settings import Setting, SettingValues
from ..workspace import DEFAULT_DOCKER_IMAGE, RUNTIME_NAMES, STAGE_MODES

if TYPE_CHECKING:  # the runtimes load when one is made, not with the settings
    from ..workspace import Runtime

RUNTIME_SETTINGS = settings.declare(
    Setting(
        ini="skills_runtime",
        kind="choice",
        choices=RUNTIME_NAMES,
        default="local",
        help="where skill commands run: local (host), sandbox (bubblewrap) or docker",
    ),
    Setting(
        ini="skills_work_root",
        default="",
        metavar="DIR",
        default_shown="the system temporary folder",
        help="folder for skill workspaces",
    ),
    Setting(
        ini="skills_keep_workspaces",
        kind="bool",
        help="keep each test's workspace folder instead of deleting it after the test",
    ),
    Setting(
        ini="skills_docker_image",
        commands=("docker-image",),
        command_flag="--image",
        default=DEFAULT_DOCKER_IMAGE,
        metavar="IMAGE",
        help="image of the docker runtime (needs bash; 'agent-skills docker-image' builds it,"
        " and never replaces an image of that name it did not build)",
    ),
    Setting(
        ini="skills_stage_mode",
        kind="choice",
        choices=STAGE_MODES,
        default="link",
        help="stage skills by links (sandbox, docker; cost independent of size) or by copy"
        " (local always copies)",
    ),
    Setting(
        ini="skills_runtime_missing",
        kind="choice",
        choices=("fail", "skip"),
        default="fail",
        help="what a test or an eval item does when its runtime (bubblewrap, Docker) is not"
        " available",
    ),
)


class RuntimeOptions(NamedTuple):  # not a dataclass: built at every pytest start-up
    """How the runtimes of a session are made (:meth:`create`), and which one runs a command
    that names none."""

    default: str = "local"
    work_root: Path | None = None
    image: str = DEFAULT_DOCKER_IMAGE
    stage_mode: str = "link"
    keep_workspaces: bool = False
    #: A runtime that is not available skips the test instead of failing it.
    skip_missing: bool = False

    def create(self, kind: str) -> Runtime:
        """A new runtime of ``kind`` with these options; raises
        :class:`~pytest_agent_skills.workspace.RuntimeUnavailableError`."""
        from ..workspace import create_runtime

        return create_runtime(
            kind,
            work_root=self.work_root,
            image=self.image,
            stage_mode=self.stage_mode,
            keep_workspaces=self.keep_workspaces,
        )


def runtime_options(values: SettingValues) -> RuntimeOptions:
    """The :class:`RuntimeOptions` of the settings."""
    work_root = values("skills_work_root")
    return RuntimeOptions(
        default=str(values("skills_runtime")),
        work_root=Path(work_root) if work_root else None,
        image=values("skills_docker_image"),
        stage_mode=values("skills_stage_mode"),
        keep_workspaces=bool(values("skills_keep_workspaces")),
        skip_missing=values("skills_runtime_missing") == "skip",
    )
