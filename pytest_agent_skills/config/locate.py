"""The configuration file pytest would use for a path, found without importing pytest.

pytest looks, from the path upwards, in each folder for ``pytest.toml``,
``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``, ``tox.ini``
and ``setup.cfg``, in that order, and takes the first that holds its configuration
(a ``pytest.ini`` or ``pytest.toml`` always does, even empty; ``pyproject.toml`` with a
``[tool.pytest]`` or ``[tool.pytest.ini_options]`` table; ``tox.ini`` with ``[pytest]``;
``setup.cfg`` with ``[tool:pytest]``).  When none does, the nearest ``pyproject.toml``
is the configuration file, with no values.  :class:`ConfigLocator` gives the same
answer (a test holds it to pytest's own ``locate_config``) and remembers it for every
folder it looked at, so that thousands of paths in one tree cost one look per folder.

This is pytest 9's search.  pytest 8.4 reads no ``pytest.toml``, ``.pytest.toml`` nor
``[tool.pytest]`` table, and an ``.pytest.ini`` only with a ``[pytest]`` section: under pytest
8.4 they are passed over here too, so that the command reads what pytest reads.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import ConfigurationError
from ..listings import FolderListings, is_file
from ..settings import ConfigFile

#: The names pytest looks for in each folder, in its order of preference.
CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
_CONFIG_NAMES = frozenset(CONFIG_NAMES)

#: The files only pytest 9 reads (besides a ``[tool.pytest]`` table and an ``.pytest.ini``
#: without ``[pytest]``).
_PYTEST_9_NAMES = frozenset({"pytest.toml", ".pytest.toml"})

#: pytest's words for a setup.cfg whose section is ``[pytest]``.
_CFG_PYTEST_SECTION = (
    "[pytest] section in setup.cfg files is no longer supported, change to [tool:pytest] instead."
)


class _Found(NamedTuple):
    """What a folder and its ancestors settle: the configuration file (or None) and the
    nearest ``pyproject.toml``, the fallback when no file holds pytest's configuration."""

    config: ConfigFile | None
    pyproject: str | None


_NOTHING = _Found(None, None)


class ConfigLocator:
    """The configuration file of each path, looked up once per folder.

    Relative paths are taken from ``invocation_dir`` (default: the current folder).  Paths
    that share a configuration get the same :class:`ConfigFile` object.  Folders are listed
    through ``listings`` (a run's shared listings, which then need not list a skill's folder
    again to check it; new ones when None).
    """

    def __init__(
        self, invocation_dir: Path | None = None, listings: FolderListings | None = None
    ) -> None:
        self.invocation_dir = os.path.abspath(invocation_dir or Path.cwd())
        self.listings = listings or FolderListings()
        self._folders: dict[str, _Found] = {}
        self._no_values: dict[str, ConfigFile] = {}

    def locate(self, path: str | os.PathLike[str], *, is_dir: bool | None = None) -> ConfigFile:
        """The configuration pytest would read when given ``path`` alone (``is_dir``: whether
        it is a folder, when the caller knows)."""
        absolute = os.path.abspath(os.path.join(self.invocation_dir, path))
        if is_dir is None:
            is_dir = os.path.isdir(absolute)
        # pytest looks in the path itself first: only a folder can hold a file.
        start = absolute if is_dir else os.path.dirname(absolute)
        found = self._folder(start)
        if found.config is not None:
            return found.config
        return self._without_values(found.pyproject or "")  # "": no file at all

    def _without_values(self, path: str) -> ConfigFile:
        config = self._no_values.get(path)
        if config is None:
            config = self._no_values[path] = ConfigFile(Path(path) if path else None, {})
        return config

    def _folder(self, folder: str) -> _Found:
        """What ``folder`` and its ancestors settle: the folders are looked at upwards until
        one holds pytest's configuration or is known already (or the file system's root)."""
        unsettled: list[tuple[str, str | None]] = []  # (folder, its pyproject.toml) upwards
        current = folder
        while True:
            known = self._folders.get(current)
            if known is not None:
                above = known
                break
            config, pyproject = self._own(current, self.listings)
            if config is not None:
                above = self._folders[current] = _Found(config, None)
                break
            unsettled.append((current, pyproject))
            parent = os.path.dirname(current)
            if parent == current:
                above = _NOTHING
                break
            current = parent
        for name, pyproject in reversed(unsettled):
            if above.config is None and pyproject is not None:
                above = _Found(None, pyproject)
            self._folders[name] = above
        return self._folders[folder]

    @staticmethod
    def _own(folder: str, listings: FolderListings) -> tuple[ConfigFile | None, str | None]:
        """The configuration file of ``folder`` itself, and its ``pyproject.toml``."""
        pyproject = None
        for name in _config_names(folder, listings):
            path = os.path.join(folder, name)
            if name == "pyproject.toml":
                pyproject = path
            values = load_config_values(Path(path))
            if values is not None:
                return ConfigFile(Path(path), values), pyproject
        return None, pyproject


def _config_names(folder: str, listings: FolderListings) -> list[str]:
    """The configuration files in ``folder``, in pytest's order: from the folder's listing, the
    names present that are files, links followed (a folder named ``pytest.ini`` is no file)."""
    entries = listings.entries(folder)
    if entries is None:  # absent, no folder, not readable: pytest finds no file there either
        return []
    if _CONFIG_NAMES.isdisjoint(entries):  # most folders (a skill's, thousands of them)
        return []
    return [
        name
        for name in CONFIG_NAMES
        if name in entries
        and is_file(entries[name])
        and (name not in _PYTEST_9_NAMES or reads_pytest_9_files())
    ]


@functools.cache
def reads_pytest_9_files() -> bool:
    """Whether the installed pytest reads pytest 9's configuration files; asked only when a
    folder holds one (reading a distribution's version costs tens of milliseconds)."""
    from importlib.metadata import version

    return int(version("pytest").split(".")[0]) >= 9


def load_config_values(path: Path) -> dict[str, Any] | None:
    """pytest's configuration in ``path`` (name -> value: text or a list of texts from ini
    files and ``[tool.pytest.ini_options]``, TOML's own types from ``[tool.pytest]`` and
    ``pytest.toml``), or None when the file holds none.  A file that does not parse raises
    :class:`ConfigurationError` with pytest's message."""
    if path.suffix == ".ini":
        sections = _ini_sections(path)
        if "pytest" in sections:
            return dict(sections["pytest"])
        if path.name == ".pytest.ini" and not reads_pytest_9_files():
            return None  # pytest 8.4 reads it only with a [pytest] section
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None
    if path.suffix == ".cfg":
        sections = _ini_sections(path)
        if "tool:pytest" in sections:
            return dict(sections["tool:pytest"])
        if "pytest" in sections:
            raise ConfigurationError(_CFG_PYTEST_SECTION)
        return None
    if path.suffix == ".toml":
        return _toml_values(path)
    return None


def _ini_sections(path: Path) -> Mapping[str, Mapping[str, str]]:
    import iniconfig  # pytest's own ini reader, so that both read a file alike

    try:
        parsed = iniconfig.IniConfig(str(path))
    except iniconfig.ParseError as error:
        raise ConfigurationError(str(error)) from None
    return {section.name: dict(section.items()) for section in parsed}


def _toml_values(path: Path) -> dict[str, Any] | None:
    # Imported here: most runs read no TOML file.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomli is tomllib before 3.11, declared for Python 3.10 only
        import tomli as tomllib

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: {error}") from None
    if path.name in ("pytest.toml", ".pytest.toml"):
        table: dict[str, Any] = document.get("pytest", {})
        return dict(table)  # always the configuration, even empty
    tool_pytest: dict[str, Any] = document.get("tool", {}).get("pytest", {})
    native = {name: value for name, value in tool_pytest.items() if name != "ini_options"}
    if native and not reads_pytest_9_files():
        native = {}  # pytest 8.4 reads [tool.pytest.ini_options] only
    ini_options: dict[str, Any] | None = tool_pytest.get("ini_options")
    if native and ini_options:
        raise ConfigurationError(
            f"{path}: Cannot use both [tool.pytest] (native TOML types) and"
            " [tool.pytest.ini_options] (string-based INI format) simultaneously. Please use"
            " [tool.pytest] with native TOML types (recommended) or [tool.pytest.ini_options]"
            " for backwards compatibility."
        )
    if native:
        return native
    if ini_options is not None:
        return {
            name: value if isinstance(value, list) else str(value)
            for name, value in ini_options.items()
        }
    return None
