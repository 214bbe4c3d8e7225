"""The arguments of the gate's report commands: the skill paths, the output, and the flags of
the settings each command takes (declared with ``commands`` in the settings registry, added as
every command adds them), resolved as pytest resolves them (the flag, then the environment
variable, then the configuration file pytest reads, then the default)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config.command_line import add_paths_argument
from ..config.file_settings import FileSettings, add_command_flags


def add_report_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The arguments every report command of the gate takes: the skill paths, ``--format``
    (text or json), ``-o`` and the flags of the settings of ``command``."""
    add_paths_argument(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file")
    add_command_flags(parser, command)


def setting_values(args: argparse.Namespace, command: str, start: Path) -> FileSettings:
    """The settings of ``command`` for the configuration file pytest would read at ``start``,
    its flags in ``args`` first."""
    from ..config.locate import ConfigLocator

    return FileSettings.of_command(ConfigLocator(Path.cwd()).locate(start), args, command)

