"""``agent-skills coverage [PATH...]``: which skills have evals, trigger queries and scenarios,
and recordings of each.  Exit 0; 1 when the share of covered skills is below
``--min-coverage``; 2 on usage errors."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..config.command_line import check_output, write_report
from ..errors import ConfigurationError
from ..settings import SettingValues
from .flags import add_report_arguments, setting_values

EXIT_OK = 0
EXIT_BELOW = 1

#: Where the eval cassettes are when no setting says (as ``agent-skills eval`` looks).
DEFAULT_CASSETTES = "eval-cassettes"


def configure(parser: argparse.ArgumentParser) -> None:
    add_report_arguments(parser, "coverage")


def min_coverage(values: SettingValues) -> float:
    """The share of skills that must be covered (``--min-coverage``), refused outside 0..1."""
    minimum: float = values("skills_min_coverage")
    if not 0 <= minimum <= 1:
        raise ConfigurationError(
            f"{values.origin('skills_min_coverage')}: --min-coverage is a share of the skills"
            f" from 0 to 1 (0.8: four in five), got {minimum!r}"
        )
    return minimum


def cassettes_folder(values: SettingValues) -> Path:
    """Where the eval cassettes are (``--cassettes``), from the configuration's folder."""
    return values.base_dir / (values("skills_eval_cassettes") or DEFAULT_CASSETTES)


def run(args: argparse.Namespace, targets: Sequence[Path]) -> int:
    from ..rules import skill_dirs
    from .coverage import coverage_report, to_text

    check_output(args.output)
    values = setting_values(args, "coverage", targets[0] if targets else Path.cwd())
    folders = list(dict.fromkeys(folder for path in targets for folder in skill_dirs(path)))
    report = coverage_report(folders, cassettes_folder(values), min_coverage(values))
    if args.format == "json":
        text = report.model_dump_json(indent=2, by_alias=True) + "\n"
    else:
        text = to_text(report)
    write_report(args.output, text)
    return EXIT_OK if report.passed else EXIT_BELOW
