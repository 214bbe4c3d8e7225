"""What the ``agent-skills`` commands share of their command line, below the front door (the
gate's and the evals' commands stand below it): the skill paths they take, the ``-o`` report
file they write whole or not at all, and the :class:`UsageError` of bad input (exit status 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import AgentSkillsError


class UsageError(AgentSkillsError):
    """Bad command-line input; reported with exit status 2."""


def add_paths_argument(parser: argparse.ArgumentParser) -> None:
    """The ``PATH_OR_URL ...`` argument of a command over skills
    (:func:`pytest_agent_skills.targets.targets` reads it)."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_URL",
        help="a skill folder, a SKILL.md, a folder of many skills, or a URL of a skills root"
        " (default: what `pytest` here collects, then the skills_roots of its configuration)",
    )


def check_output(path: Path | None) -> None:
    """A usage error, before any work, for an ``-o`` path that cannot be a report file (None:
    no ``-o``, the standard output)."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"-o {path}: is a folder; give the path of the report file to write")
    if not path.parent.is_dir():
        raise UsageError(f"-o {path}: the folder {path.parent} does not exist; create it first")


def write_report(output: Path | None, text: str) -> None:
    """A command's report: to ``output`` (``-o``) when given, whole or not at all (a reader
    never sees half a report), a :class:`UsageError` naming it when it cannot be written;
    else to the standard output."""
    if output is None:
        sys.stdout.write(text)
        return
    from ..files import write_atomic

    try:
        write_atomic(output, text)
    except OSError as error:
        raise UsageError(
            f"-o {output}: cannot write the report ({error.strerror or error})"
        ) from None
