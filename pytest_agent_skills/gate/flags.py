"""A gate command's flags, derived from the settings registry: each setting named becomes a
flag with its help and default, and its value is resolved as pytest resolves it (the flag,
then the environment variable, then the configuration file pytest reads, then the default)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from .. import settings
from ..config.file_settings import FileSettings


def add_setting_flags(parser: argparse.ArgumentParser, names: Mapping[str, str]) -> None:
    """One flag per setting of ``names`` (ini name -> the command's flag), as every command
    derives its flags from the registry (:func:`~pytest_agent_skills.settings.add_command_flag`)."""
    for ini, flag in names.items():
        settings.add_command_flag(parser, settings.REGISTRY[ini], flag)


def setting_values(
    args: argparse.Namespace, names: Mapping[str, str], start: Path
) -> FileSettings:
    """The settings of ``names`` for the configuration file pytest would read at ``start``,
    the flags of ``args`` first."""
    from ..config.locate import ConfigLocator

    flags = {
        ini: getattr(args, flag.removeprefix("--").replace("-", "_")) for ini, flag in names.items()
    }
    return FileSettings(ConfigLocator(Path.cwd()).locate(start), flags, flag_names=names)


def add_report_arguments(parser: argparse.ArgumentParser, names: Mapping[str, str]) -> None:
    """The arguments every report command of the gate takes: the skill paths, ``--format``
    (text or json), ``-o`` and the flags of the settings ``names``."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="skill folders, SKILL.md files or roots of many skills (default: what `pytest`"
        " here collects, then skills_roots)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file")
    add_setting_flags(parser, names)


def emit(args: argparse.Namespace, text: str) -> None:
    """Write a report to ``-o`` (whole or not at all), else to the standard output."""
    if args.output:
        from ..files import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
