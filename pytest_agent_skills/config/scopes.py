"""What each configuration file decides for the paths it covers, for a command given many
paths: located once per folder (:class:`~.locate.ConfigLocator`), built once per file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import roots  # noqa: F401 - declares skills_roots and skills_refresh, which scopes read
from .file_settings import FileSettings
from .locate import ConfigLocator
from .sources import source_options
from .validation import validation_options

if TYPE_CHECKING:
    from ..listings import FolderListings
    from ..rules import ValidationOptions
    from ..settings import ConfigFile
    from ..sources.options import SourceOptions


class Scope(NamedTuple):
    """The settings of one configuration file (with the command's flags) and the options
    they build."""

    settings: FileSettings
    validation: ValidationOptions
    sources: SourceOptions

    @property
    def refresh(self) -> bool:
        return bool(self.settings("skills_refresh"))


class Scopes:
    """The :class:`Scope` of each path: the configuration file pytest would read for it.

    ``flags`` (ini name -> value, None when not given) beat the environment and every file.
    A bad value raises :class:`~pytest_agent_skills.errors.ConfigurationError` when the first
    path its file covers is asked for.  Folders are listed through ``listings`` (a run's
    shared listings; new ones when None).
    """

    def __init__(
        self,
        flags: Mapping[str, Any],
        invocation_dir: Path | None = None,
        listings: FolderListings | None = None,
        flag_names: Mapping[str, str] | None = None,
    ) -> None:
        self.invocation_dir = invocation_dir or Path.cwd()
        self.flags = dict(flags)
        #: The command's own flag of a setting (ini name -> flag), named in messages.
        self.flag_names = dict(flag_names or {})
        self.locator = ConfigLocator(self.invocation_dir, listings)
        self._by_file: dict[int, Scope] = {}

    def for_path(self, path: str | Path, *, is_dir: bool | None = None) -> Scope:
        """The scope of ``path`` (``is_dir``: whether it is a folder, when the caller knows)."""
        return self.of(self.locator.locate(path, is_dir=is_dir))

    def of(self, config: ConfigFile) -> Scope:
        scope = self._by_file.get(id(config))
        if scope is None:
            values = FileSettings(config, self.flags, flag_names=self.flag_names)
            scope = Scope(
                values, validation_options(values), source_options(values, self.invocation_dir)
            )
            self._by_file[id(config)] = scope
        return scope
