"""What pytest enters inside a skill folder (a folder holding a ``SKILL.md``).

A skill folder is mostly documents, scripts and assets that no collector takes, yet pytest's
walk makes a node of each of its folders and asks every plugin and conftest about each of its
files: in a repository of thousands of skills that walk is most of a run.  So a skill folder is
collected by :class:`SkillFolder`, which enters only the files and folders where something can
be collected, found with one walk of plain folder listings:

- the plugin's own files: ``SKILL.md`` (a skill in a skill folder too), ``*.scenario.yaml``,
  ``evals/evals.json`` and ``evals/triggers.json``;
- pytest's: a ``conftest.py``, a ``.py`` file matching ``python_files`` (any ``.py`` file
  under ``--doctest-modules``), a file matching ``--doctest-glob`` (``test*.txt`` by default);
- whatever the command line names (a path inside a skill folder, or one of its folders).

What it enters is collected as pytest does everywhere: through ``pytest_ignore_collect``
(``--ignore``, ``--ignore-glob``, ``norecursedirs``, ``collect_ignore``) and the collection
hooks, a folder as pytest's own ``Dir`` or ``Package`` that walks all it holds.  A skill folder
that is a Python package or holds a ``conftest.py`` is left to pytest's walk, as is every skill
folder under ``skills_walk_skill_folders = true``: for plugins that collect other file types
inside skill folders (such files are not offered to ``pytest_collect_file`` otherwise).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from ..filenames import SCENARIO_SUFFIX, SKILL_FILE
from ..listings import is_file, is_folder, is_venv
from .evals import EVALS_NAME, TRIGGERS_NAME

#: The files the evals glue collects, in a skill's ``evals/`` folder.
EVALS_FOLDER, EVAL_FILES = "evals", frozenset({EVALS_NAME, TRIGGERS_NAME})
_WANTED_KEY = pytest.StashKey["CollectableFiles"]()
#: A skill folder holding one of these is walked as pytest walks any folder: it is a Python
#: package, or its conftest.py may collect any file below it.
_WALKED_AS_PYTEST_DOES = frozenset({"__init__.py", "conftest.py"})


def skill_folder(path: Path, parent: pytest.Collector | pytest.Session) -> SkillFolder | None:
    """The collector of the folder ``path``, which holds a ``SKILL.md``; None when pytest is
    to walk it whole."""
    entries = _entries(path)
    if entries is None or any(entry.name in _WALKED_AS_PYTEST_DOES for entry in entries):
        return None
    node: SkillFolder = SkillFolder.from_parent(parent, path=path)
    node.entries = entries
    return node


class SkillFolder(pytest.Directory):
    """A skill folder: its ``SKILL.md`` and the files and folders where something else can be
    collected, each as pytest collects it."""

    #: The folder's entries, listed when the folder was found to be a skill folder.
    entries: list[os.DirEntry[str]]

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        config, ihook = self.config, self.ihook  # one hook proxy for the folder, as pytest's Dir
        wanted = collectable_files(config)
        # What the command line names in this folder (and each folder on the way to it) is
        # entered without asking, as pytest does; anything else only when something may
        # collect it and pytest_ignore_collect does not leave it out.
        named_inside = self.session.isinitpath(self.path, with_parents=True)
        for entry in sorted(self.entries, key=lambda entry: entry.name):  # as pytest's Dir
            folder = is_folder(entry)
            if not (folder or is_file(entry)):
                continue
            path = Path(entry.path)
            if not (named_inside and self.session.isinitpath(path, with_parents=folder)) and (
                not (wanted.in_folder(entry) if folder else wanted.file(entry.name, entry.path))
                or ihook.pytest_ignore_collect(collection_path=path, config=config)
            ):
                continue
            if folder:
                node = ihook.pytest_collect_directory(path=path, parent=self)
                if node is not None:
                    yield node
            else:
                yield from ihook.pytest_collect_file(file_path=path, parent=self)


def collectable_files(config: pytest.Config) -> CollectableFiles:
    """This session's :class:`CollectableFiles` (made on first use)."""
    if _WANTED_KEY not in config.stash:
        config.stash[_WANTED_KEY] = CollectableFiles(config)
    return config.stash[_WANTED_KEY]


class CollectableFiles:
    """Which files under a skill folder something may collect, by this run's options."""

    def __init__(self, config: pytest.Config) -> None:
        self.python_files = Globs(config.getini("python_files"))
        self.doctest_modules = bool(config.getoption("doctestmodules", False))
        self.doctest_files = Globs(config.getoption("doctestglob", None) or ["test*.txt"])
        self.norecursedirs = Globs(config.getini("norecursedirs"))
        self.in_venvs = bool(config.getoption("collect_in_virtualenv", False))

    def file(self, name: str, path: str) -> bool:
        if name == SKILL_FILE or name.endswith(SCENARIO_SUFFIX):
            return True
        if name in EVAL_FILES:
            return os.path.basename(os.path.dirname(path)) == EVALS_FOLDER
        if name.endswith(".py") and (
            name == "conftest.py" or self.doctest_modules or self.python_files.match(name, path)
        ):
            return True
        return self.doctest_files.match(name, path)

    def in_folder(self, folder: os.DirEntry[str]) -> bool:
        """Whether something below ``folder`` may be collected: a file :meth:`file` takes, or a
        linked folder (pytest follows links; whether it leads anywhere is left to it).  Folders
        pytest does not walk (``norecursedirs``, virtual environments) are not looked into."""
        if folder.is_symlink():
            return True
        if self.norecursedirs.match(folder.name, folder.path):
            return False
        entries = _entries(folder.path)
        if entries is None:
            return True  # entered: pytest's walk reports why it cannot be listed
        if not self.in_venvs and is_venv(folder.path, [entry.name for entry in entries]):
            return False
        for entry in entries:
            if self.in_folder(entry) if is_folder(entry) else self.file(entry.name, entry.path):
                return True
        return False


class Globs:
    """pytest's ``fnmatch_ex`` for many patterns at once: a pattern without a path separator
    matches the file name (all of them in one regular expression), the others the path."""

    def __init__(self, patterns: Iterable[str]) -> None:
        patterns = [os.path.normcase(pattern) for pattern in patterns]
        # (on Windows, pytest takes a pattern with '/' as a path pattern too)
        self.paths = [pattern for pattern in patterns if os.sep in pattern or "/" in pattern]
        by_name = [fnmatch.translate(pattern) for pattern in patterns if pattern not in self.paths]
        self.names = re.compile("|".join(by_name)) if by_name else None

    def match(self, name: str, path: str) -> bool:
        if self.names is not None and self.names.match(os.path.normcase(name)):
            return True
        if not self.paths:
            return False
        from _pytest.pathlib import fnmatch_ex

        return any(fnmatch_ex(pattern, path) for pattern in self.paths)


def _entries(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]] | None:
    """The entries of ``folder``; None when it cannot be listed (pytest's walk says why)."""
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:
        return None
