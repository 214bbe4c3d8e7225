"""The settings every concern shares: the extra skill roots, whether URL roots are
downloaded again, and the git ref that limits a run to the skills changed since."""

from __future__ import annotations

from .. import settings
from ..settings import Setting

ROOT_SETTINGS = settings.declare(
    Setting(
        ini="skills_roots",
        flag="--skills-root",
        kind="list",
        env="SKILLS_ROOT",
        metavar="PATH_OR_URL",
        help="extra skill roots (paths, file:// or http(s):// URLs) collected even in dot-folders;"
        " repeat the flag for several",
    ),
    Setting(
        ini="skills_refresh",
        commands=("validate",),
        kind="bool",
        help="download URL skill roots again instead of using the cache",
    ),
    Setting(
        ini="skills_changed_since",
        commands=("validate", "audit", "eval", "triggers", "ci"),
        metavar="REF",
        help="only the skills with a file that differs from this git ref (committed, staged,"
        " unstaged or untracked), e.g. HEAD~1 or origin/main; how many were left out is"
        " reported (eval: nothing runs for an unchanged skill; triggers: the whole matrix runs"
        " when a changed skill has trigger queries or a name or description changed)",
    ),
)
