"""The skills a command works on: the paths and URLs given, else what a bare ``pytest`` here
collects, each with the scope of the configuration pytest would read for it."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .config.command_line import UsageError
from .filenames import SKILL_FILE

if TYPE_CHECKING:
    from .config.scopes import Scope, Scopes
    from .links import SkippedLink
    from .listings import FolderListings


def targets(specs: Sequence[str], scopes: Scopes, skipped: list[SkippedLink]) -> dict[Path, Scope]:
    """The paths to check: those given, else what a bare ``pytest`` here collects."""
    return _given_targets(specs, scopes) if specs else _selected_targets(scopes, skipped)


def _given_targets(specs: Sequence[str], scopes: Scopes) -> dict[Path, Scope]:
    """The paths and URLs on the command line, each with the scope of its configuration (a
    URL's: the current folder's)."""
    targets: dict[Path, Scope] = {}
    for spec in specs:
        if "://" in spec:  # unpacked into the cache
            scope = scopes.for_path(".")
            targets.setdefault(_resolved_root(spec, scope, None), scope)
            continue
        found = _skill_file_scope(spec, scopes)
        if found is not None:  # the common case: pre-commit passes every SKILL.md
            targets.setdefault(Path(spec), found)
            continue
        try:
            mode: int | None = os.stat(spec).st_mode
        except OSError:
            mode = None
        scope = scopes.for_path(spec, is_dir=mode is not None and stat.S_ISDIR(mode))
        local = Path(spec)
        if mode is None:
            raise UsageError(f"{spec}: no such file or folder")
        if stat.S_ISREG(mode) and local.name.lower() != "skill.md":
            # Local archives (.zip, .tar, .tar.gz) are unpacked into the cache.
            targets.setdefault(_resolved_root(spec, scope, None), scope)
        else:
            # Local paths are used as given, so reports show them as the user wrote them.
            targets.setdefault(local, scope)
    return targets


def _skill_file_scope(spec: str, scopes: Scopes) -> Scope | None:
    """The scope of ``spec`` when it names a ``SKILL.md`` file, known from its folder's
    listing, which the configuration and the checks read too (thousands of paths are
    common); None otherwise (one ``stat`` then says what it is)."""
    folder, name = os.path.split(spec)
    if name != SKILL_FILE:
        return None
    absolute = os.path.normpath(os.path.join(scopes.locator.invocation_dir, folder))
    if not scopes.locator.listings.is_file(absolute, name):
        return None
    return scopes.for_path(absolute, is_dir=True)  # pytest looks from the file's folder


def _selected_targets(scopes: Scopes, skipped: list[SkippedLink]) -> dict[Path, Scope]:
    """What a bare ``pytest`` here collects: the skills under its test paths (``testpaths``
    from the rootdir, else this folder; ``norecursedirs`` not entered), then the
    ``skills_roots`` (relative to the configuration file's folder, shown relative to here).
    The linked folders the walk did not enter are added to ``skipped``."""
    from .config.selection import DEFAULT_NORECURSEDIRS, SkillWalk, ini_args, test_paths

    scope = scopes.for_path(".")
    config = scope.settings.config
    walk = SkillWalk(ini_args(config, "norecursedirs", DEFAULT_NORECURSEDIRS))
    targets: dict[Path, Scope] = {}
    for start in map(Path, test_paths(config, scopes.invocation_dir)):
        if start.name == SKILL_FILE and start.is_file():  # a test path may name one skill
            targets.setdefault(start, scope)
        for skill_file in walk.skill_files(start):
            targets.setdefault(skill_file, scope)
    skipped.extend(walk.skipped)
    base_dir = scope.settings.base_dir
    for spec in scope.settings("skills_roots"):
        local = Path(os.path.relpath(base_dir / spec))
        if "://" in spec or (local.is_file() and local.name.lower() != "skill.md"):
            targets.setdefault(_resolved_root(spec, scope, base_dir), scope)
        elif local.exists():
            targets.setdefault(local, scope)
        else:
            raise UsageError(f"{config.path}: skills_roots: {spec}: no such folder")
    return targets


def repository_root(scopes: Scopes) -> Path:
    """SARIF's ``%SRCROOT%``: the folder of the configuration file pytest reads here (the
    rootdir), else the nearest folder holding ``.git``, else the current folder."""
    config_dir = scopes.for_path(".").settings.config.base_dir
    if config_dir is not None:
        return config_dir
    here = Path.cwd()
    return next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), here)


def _resolved_root(spec: str, scope: Scope, base_dir: Path | None) -> Path:
    from .sources.resolve import resolve_root

    return resolve_root(spec, refresh=scope.refresh, base_dir=base_dir, options=scope.sources)


def changed_targets(
    targets: dict[Path, Scope], ref: str, listings: FolderListings | None = None
) -> dict[Path, Scope]:
    """The SKILL.md files of the skills under ``targets`` with a file that differs from the git
    ``ref`` (each with its target's scope); what was kept and left out is said on stderr."""
    from .changes import changed_since
    from .rules import skill_dirs

    scope_of: dict[Path, Scope] = {}
    for path, scope in targets.items():
        for folder in skill_dirs(path, listings):
            scope_of.setdefault(folder, scope)
    folders = list(scope_of)
    where = folders[0] if folders else Path.cwd()  # git is asked in the first skill's work tree
    split = changed_since(folders, ref, where)
    return {folder / SKILL_FILE: scope_of[folder] for folder in split.kept}
