"""The settings as a command outside pytest sees them: its own flags, then the
environment, then the configuration file pytest would read, then the defaults.

A command's flags of settings come from the settings themselves (:func:`add_command_flags`:
each :class:`~pytest_agent_skills.settings.Setting` whose ``commands`` name it), so that a
setting's flag, variable, ini option, type, choices, default and help are declared once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..settings import REGISTRY, ConfigFile, Setting, command_settings, flag_keywords

#: The argparse type of a number setting's flag (argparse refuses a bad one as usage).
_FLAG_TYPES: dict[str, type] = {"int": int, "float": float}


def add_command_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    command: str,
    only: Callable[[Setting], bool] | None = None,
) -> None:
    """Add the flag of each setting the command ``command`` takes (its ``command_flag``, its
    value at the setting's ini name in the parsed arguments; None when not given); with
    ``only``, of those it keeps (a command that shows some in a group of their own)."""
    for setting in command_settings(command):
        if only is not None and not only(setting):
            continue
        keywords = flag_keywords(setting, setting.ini)
        if setting.kind in _FLAG_TYPES:
            keywords["type"] = _FLAG_TYPES[setting.kind]
        if setting.kind == "choice":
            keywords["choices"] = setting.choices
        parser.add_argument(setting.command_flag_name, **keywords)


def command_flag_values(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The values of the flags :func:`add_command_flags` added to the command ``command``:
    ini name -> the flag's value (None when not given)."""
    return {setting.ini: getattr(args, setting.ini) for setting in command_settings(command)}


def command_flag_names(command: str) -> dict[str, str]:
    """The flag of each setting the command ``command`` takes (ini name -> ``--runs``), which
    messages about its value name."""
    return {setting.ini: setting.command_flag_name for setting in command_settings(command)}


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

    @classmethod
    def of_command(cls, config: ConfigFile, args: argparse.Namespace, command: str) -> FileSettings:
        """The settings of ``config`` and of the flags :func:`add_command_flags` added to the
        command ``command`` (parsed in ``args``), each named by its flag in messages."""
        return cls(
            config, command_flag_values(args, command), flag_names=command_flag_names(command)
        )

    def __call__(self, ini: str) -> Any:
        return self._resolved(ini)[0]

    def origin(self, ini: str) -> str:
        origin: str = self._resolved(ini)[1]
        return origin

    def _resolved(self, ini: str) -> tuple[Any, str]:
        flag = self.flag_names.get(ini)
        cli = f"command line ({flag})" if flag else "command line"
        return self.config.resolved(REGISTRY[ini], self.flags.get(ini), self.environ, cli)

    @property
    def base_dir(self) -> Path:
        return self.config.base_dir or Path.cwd()
