"""Which ``SKILL.md`` files a bare ``pytest`` run collects, told from its configuration file
without pytest, so that ``agent-skills validate`` with no path checks the same skills.

pytest run with no argument takes ``testpaths`` (each one a glob, from the rootdir) when it
runs from the rootdir, else the current folder; it walks them skipping the folders
``norecursedirs`` matches (by default dot-folders, ``build``, ``dist``, ``node_modules``,
``venv``...), virtual environments and ``__pycache__``.  The plugin then adds the skills
of ``skills_roots``.  What conftest files and ``--ignore`` flags leave out is not known
here: they belong to a pytest run.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..filenames import SKILL_FILE
from ..links import SkippedLink, shown_under
from ..listings import is_venv
from ..settings import ConfigFile

#: pytest's default ``norecursedirs``.
DEFAULT_NORECURSEDIRS = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)


def ini_args(config: ConfigFile, name: str, default: Sequence[str] = ()) -> list[str]:
    """An ``args`` option of pytest's (``testpaths``, ``norecursedirs``): a text is split as a
    shell splits it, a TOML list is taken as it is."""
    raw: Any = config.values.get(name)
    if raw is None:
        return list(default)
    if isinstance(raw, str):
        return shlex.split(raw)
    return [str(item) for item in raw]


def test_paths(config: ConfigFile, invocation_dir: Path) -> list[str]:
    """The paths a bare ``pytest`` starts from: ``testpaths`` expanded when run from the
    rootdir (each glob's matches sorted, as pytest does), else (or when they match nothing)
    the current folder, ``"."``."""
    rootdir = config.base_dir
    if rootdir is not None and os.path.abspath(invocation_dir) == os.path.abspath(rootdir):
        found: list[str] = []
        for pattern in ini_args(config, "testpaths"):
            found.extend(sorted(glob.iglob(os.path.join(invocation_dir, pattern), recursive=True)))
        if found:
            return [shown_under(path, invocation_dir) for path in found]
    return ["."]


class SkillWalk:
    """The ``SKILL.md`` files pytest collects under a path it was given: it does not enter a
    folder ``norecursedirs`` matches, a virtual environment or ``__pycache__`` (the path
    itself is always entered, as pytest enters the folders it is given)."""

    def __init__(self, norecursedirs: Sequence[str]) -> None:
        self.by_name = [pattern for pattern in norecursedirs if os.sep not in pattern]
        self.by_path = [pattern for pattern in norecursedirs if os.sep in pattern]
        #: The linked folders the walks did not enter (a link back into a folder it is in, a
        #: second way to a folder walked already).
        self.skipped: list[SkippedLink] = []

    def skill_files(self, top: Path) -> Iterator[Path]:
        from ..repository import walk_folders  # loads the skill parser

        top_name = os.fspath(top)
        for current, dirnames, filenames in walk_folders(top, skipped=self.skipped):
            if current != top_name and is_venv(current, (*filenames, *dirnames)):
                dirnames[:] = []
                continue
            if SKILL_FILE in filenames and os.path.isfile(os.path.join(current, SKILL_FILE)):
                yield Path(current, SKILL_FILE)
            dirnames[:] = [name for name in dirnames if not self._skipped(current, name)]

    def _skipped(self, current: str, name: str) -> bool:
        if name == "__pycache__" or any(fnmatch.fnmatch(name, p) for p in self.by_name):
            return True
        if not self.by_path:
            return False
        absolute = os.path.abspath(os.path.join(current, name))
        return any(
            fnmatch.fnmatch(absolute, pattern if os.path.isabs(pattern) else f"*{os.sep}{pattern}")
            for pattern in self.by_path
        )
