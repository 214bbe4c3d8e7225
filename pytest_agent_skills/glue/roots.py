"""The skill roots of ``skills_roots`` and which of their files a pytest run selects.

pytest does not walk dot-folders (``.claude/skills``) nor folders outside the
test paths (URL roots unpacked into the cache), so the skill and scenario
glue add the files found under the configured roots themselves.  They do it
the way pytest treats paths: with no path on the command line (pytest then
runs ``testpaths`` or the rootdir) every root file runs; with paths, only the
root files inside one of them; node ids (``file::name``) are left to pytest;
``--ignore``, ``--ignore-glob`` and plugins' ``pytest_ignore_collect`` hooks apply (conftest
files inside a skill root are never imported, so their hooks and ``collect_ignore`` lists do not).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from .. import settings
from ..errors import AgentSkillsError

_ROOTS_KEY = pytest.StashKey[list[Path]]()


def skill_roots(config: pytest.Config) -> list[Path]:
    """The configured skill roots as local folders, resolved once per session."""
    if _ROOTS_KEY not in config.stash:
        config.stash[_ROOTS_KEY] = _resolve_skill_roots(config)
    return list(config.stash[_ROOTS_KEY])


def _resolve_skill_roots(config: pytest.Config) -> list[Path]:
    specs = settings.value(config, "skills_roots")
    if not specs:
        return []
    from ..repository import RootNotFoundError
    from ..sources import resolve_root

    refresh = bool(settings.value(config, "skills_refresh"))
    roots: list[Path] = []
    for spec in specs:
        try:
            root = resolve_root(spec, refresh=refresh, base_dir=config.rootpath)
        except AgentSkillsError as error:
            raise pytest.UsageError(f"skills_roots: {error}") from None
        if not root.is_dir():
            raise pytest.UsageError(f"skills_roots: {RootNotFoundError(root)}")
        roots.append(Path(os.path.abspath(root)))
    return roots


def selected_root_files(
    session: pytest.Session, found: Iterable[tuple[Path, Path]]
) -> Iterator[Path]:
    """The files among ``found`` ((root, file) pairs) that this run selects."""
    config = session.config
    wanted = _wanted_paths(config)
    for root, path in found:
        path = Path(os.path.abspath(path))
        if wanted is not None and not any(path.is_relative_to(place) for place in wanted):
            continue
        if not _ignored(session, root, path):
            yield path


def _wanted_paths(config: pytest.Config) -> list[Path] | None:
    """The folders and files given on the command line, or None when none was (all roots run).

    A node id (``path::name``) selects inside a file that pytest collects itself, so it adds
    nothing here.
    """
    if config.args_source != pytest.Config.ArgsSource.ARGS or config.option.pyargs:
        return None
    base = config.invocation_params.dir
    return [Path(os.path.abspath(base / arg)) for arg in config.args if "::" not in arg]


def _ignored(session: pytest.Session, root: Path, path: Path) -> bool:
    """Whether ``--ignore``, ``--ignore-glob`` or a ``pytest_ignore_collect`` hook leaves
    ``path`` out.

    Below the root, pytest's own ``pytest_ignore_collect`` decides, as when it walks a folder;
    the root and the folders above it are only matched against the options, since the root
    is collected even when pytest would not walk into it (a dot-folder).
    """
    config = session.config
    ignored = {Path(os.path.abspath(item)) for item in config.getoption("ignore") or ()}
    globs = [os.path.abspath(item) for item in config.getoption("ignore_glob") or ()]
    for above in (root, *root.parents):
        if above in ignored or any(fnmatch.fnmatch(str(above), glob) for glob in globs):
            return True
    below = path.relative_to(root).parts
    for depth in range(1, len(below) + 1):
        step = root.joinpath(*below[:depth])
        hook = session.gethookproxy(step)
        if hook.pytest_ignore_collect(collection_path=step, config=config):
            return True
    return False
