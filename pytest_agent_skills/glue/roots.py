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
from typing import NamedTuple

import pytest

from .. import settings
from ..errors import AgentSkillsError
from ..filenames import SCENARIO_SUFFIX, SKILL_FILE


class RootFiles(NamedTuple):
    """The files of the skill roots that the glue collects, as (root, file) pairs."""

    skills: list[tuple[Path, Path]]
    scenarios: list[tuple[Path, Path]]


_ROOTS_KEY = pytest.StashKey[list[Path]]()
_FILES_KEY = pytest.StashKey[RootFiles]()


def skill_roots(config: pytest.Config) -> list[Path]:
    """The configured skill roots as local folders, resolved once per session."""
    if _ROOTS_KEY not in config.stash:
        config.stash[_ROOTS_KEY] = _resolve_skill_roots(config)
    roots: list[Path] = config.stash[_ROOTS_KEY]
    return list(roots)


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
            if not root.is_dir():
                raise RootNotFoundError(root)
        except AgentSkillsError as error:
            # Named as the other settings' errors: the file and option, the variable, the flag.
            where = settings.origin(config, "skills_roots")
            raise pytest.UsageError(f"{where}: {error}") from None
        roots.append(Path(os.path.abspath(root)))
    return roots


def root_files(config: pytest.Config) -> RootFiles:
    """The ``SKILL.md`` and scenario files under the skill roots, in walk order: one walk of
    each root per session serves the skill and the scenario glue (under pytest-xdist, each
    worker walks once)."""
    if _FILES_KEY not in config.stash:
        roots = skill_roots(config)
        config.stash[_FILES_KEY] = _walk(roots) if roots else RootFiles([], [])
    return config.stash[_FILES_KEY]


def _walk(roots: list[Path]) -> RootFiles:
    from ..repository import walk_folders  # loads the skill parser

    found = RootFiles([], [])
    for root in roots:
        for current, _dirnames, filenames in walk_folders(root):
            # A skill's folder holds a SKILL.md regular file (as repository.find_skill_dirs).
            skill_file = os.path.join(current, SKILL_FILE)
            if SKILL_FILE in filenames and os.path.isfile(skill_file):
                found.skills.append((root, Path(skill_file)))
            found.scenarios.extend(
                (root, Path(current, name))
                for name in sorted(filenames)
                if name.endswith(SCENARIO_SUFFIX)
            )
    return found


def selected_root_files(
    session: pytest.Session, found: Iterable[tuple[Path, Path]]
) -> Iterator[Path]:
    """The files among ``found`` ((root, file) pairs) that this run selects."""
    config = session.config
    wanted = _wanted_paths(config)
    ignored = _IgnoreCheck(session)
    for root, path in found:
        path = Path(os.path.abspath(path))
        if wanted is not None and not any(path.is_relative_to(place) for place in wanted):
            continue
        if not ignored(root, path):
            yield path


def _wanted_paths(config: pytest.Config) -> list[Path] | None:
    """The folders and files given on the command line, or None when none was (all roots run).

    A node id (``path::name``) selects inside a file that pytest collects itself, so it adds
    nothing here (nor does a module name given with ``--pyargs``: no root file is inside it).
    """
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return None
    base = config.invocation_params.dir
    return [Path(os.path.abspath(base / arg)) for arg in config.args if "::" not in arg]


class _IgnoreCheck:
    """Whether ``--ignore``, ``--ignore-glob`` or a plugin's ``pytest_ignore_collect`` leaves a
    root file out.

    The options are matched against the file and every folder above it (the root included:
    it is collected even when pytest would not walk into it, a dot-folder).  pytest's own
    ``pytest_ignore_collect`` adds nothing more here (no conftest of a root is loaded, and its
    ``norecursedirs`` are for walking the test paths), and conftest files only apply where
    pytest walks, so the implementations of installed plugins are asked, once per folder of
    the root and for the file; the first answer that is not None decides, as in the hook.
    """

    def __init__(self, session: pytest.Session) -> None:
        config = session.config
        self.config = config
        self.paths = {Path(os.path.abspath(item)) for item in config.getoption("ignore") or ()}
        self.globs = [os.path.abspath(item) for item in config.getoption("ignore_glob") or ()]
        self.plugins = [
            impl
            for impl in reversed(config.pluginmanager.hook.pytest_ignore_collect.get_hookimpls())
            if not (_builtin_or_conftest(impl.plugin) or impl.hookwrapper or impl.wrapper)
        ]
        self.cache: dict[Path, bool] = {}

    def __call__(self, root: Path, path: Path) -> bool:
        if (self.paths or self.globs) and any(
            self._by_options(place) for place in (path, *path.parents)
        ):
            return True
        return bool(self.plugins) and any(
            self._by_plugins(root / step) for step in _steps(path.relative_to(root))
        )

    def _by_options(self, place: Path) -> bool:
        return place in self.paths or any(fnmatch.fnmatch(str(place), g) for g in self.globs)

    def _by_plugins(self, place: Path) -> bool:
        if place not in self.cache:
            arguments = {"collection_path": place, "config": self.config}
            answers = (
                impl.function(**{name: arguments[name] for name in impl.argnames})
                for impl in self.plugins
            )
            self.cache[place] = bool(next((a for a in answers if a is not None), False))
        return self.cache[place]


def _builtin_or_conftest(plugin: object) -> bool:
    if getattr(plugin, "__name__", "").startswith("_pytest."):
        return True
    return os.path.basename(getattr(plugin, "__file__", None) or "") == "conftest.py"


def _steps(relative: Path) -> list[Path]:
    """``a/b/c`` -> ``a``, ``a/b``, ``a/b/c``."""
    parts = relative.parts
    return [Path(*parts[: depth + 1]) for depth in range(len(parts))]


def relative_path(path: Path, start: Path) -> str:
    """``path`` from ``start`` (``../`` where outside it), or whole where no relative path
    leads there (another drive on Windows)."""
    try:
        return os.path.relpath(path, start)
    except ValueError:
        return str(path)


def skill_dir_of(path: Path) -> Path | None:
    """The skill folder of a collected ``SKILL.md`` or of a file in a skill's ``evals/``."""
    if path.name == SKILL_FILE:
        return path.parent
    if path.parent.name == "evals" and (path.parent.parent / SKILL_FILE).is_file():
        return path.parent.parent
    return None


def selected_skill_dirs(session: pytest.Session, items: Iterable[pytest.Item]) -> list[Path]:
    """The skills a run selected, each once: those of the collected ``SKILL.md`` and eval
    files, and those under the skill roots (the items a run adds per skill are made of
    these)."""
    collected = [Path(item.path) for item in items]
    under_roots = selected_root_files(session, root_files(session.config).skills)
    folders: dict[str, Path] = {}
    for path in (*collected, *under_roots):
        folder = skill_dir_of(path)
        if folder is not None:
            folders.setdefault(os.path.realpath(folder), folder)
    return list(folders.values())
