"""The settings every concern shares: the extra skill roots and whether URL roots are
downloaded again."""

from __future__ import annotations

from .. import settings
from ..settings import Setting

ROOT_SETTINGS = settings.declare(
    Setting(
        ini="skills_roots",
        flag="--skills-root",
        kind="list",
        default=[],
        env="SKILLS_ROOT",
        metavar="PATH_OR_URL",
        help="extra skill roots (paths, file:// or http(s):// URLs) collected even in dot-folders;"
        " repeat the flag for several",
    ),
    Setting(
        ini="skills_refresh",
        kind="bool",
        default=False,
        help="download URL skill roots again instead of using the cache",
    ),
)
