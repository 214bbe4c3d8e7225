"""The settings as a command outside pytest sees them: its own flags, then the
environment, then the configuration file pytest would read, then the defaults."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..settings import REGISTRY, ConfigFile


class FileSettings:
    """:class:`~pytest_agent_skills.settings.SettingValues` of one configuration file and
    some flags (ini name -> the flag's value, ``None`` when not given).

    ``flag_names`` names the command's own flags in messages about their values.
    ``base_dir`` is the configuration file's folder (the current folder without a file), as
    the rootdir is for pytest: relative ``skills_roots`` and per-path ignores start there.
    """

    def __init__(
        self,
        config: ConfigFile,
        flags: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        flag_names: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.flags = dict(flags or {})
        self.environ = environ
        #: The command's own flag of a setting (ini name -> ``--runs``), named in messages.
        self.flag_names = dict(flag_names or {})

    def __call__(self, ini: str) -> Any:
        return self.config.resolve(REGISTRY[ini], self.flags.get(ini), self.environ, self._cli(ini))

    def origin(self, ini: str) -> str:
        return self.config.origin(REGISTRY[ini], self.flags.get(ini), self.environ, self._cli(ini))

    def _cli(self, ini: str) -> str:
        flag = self.flag_names.get(ini)
        return f"command line ({flag})" if flag else "command line"

    @property
    def base_dir(self) -> Path:
        return self.config.base_dir or Path.cwd()
