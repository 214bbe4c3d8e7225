"""``agent-skills mutate SKILL_DIR``: make mutants of a skill, run its checks against each,
report which the checks killed and which survived.  Exit 0, 1 below ``--min-score`` (or when
the checks cannot run), 2 on usage errors, 130 when stopped by Ctrl-C (nothing is written)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..config.mutation import MUTATION_SETTINGS, command_flag

EXIT_OK, EXIT_LOW, EXIT_INTERRUPTED = 0, 1, 130
_ARG_TYPES = {"int": int, "float": float}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill folder")
    parser.add_argument(
        "--format", choices=("text", "json", "html"), default="text", help="report format"
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file, not stdout")
    for setting in MUTATION_SETTINGS:  # declared once, as settings (config/mutation.py)
        parser.add_argument(
            command_flag(setting),
            dest=setting.ini,
            type=_ARG_TYPES[setting.kind],
            metavar=setting.metavar,
            help=f"{setting.help} (default: {setting.describe_default()}; ini: {setting.ini})",
        )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--pytest",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="instead of the scenarios: the repository's pytest run (with ARGS, the rest of the"
        " command line), the mutant in place of the skill, in a temporary copy of the"
        " repository",
    )


def run(args: argparse.Namespace) -> int:
    from ..config.file_settings import FileSettings
    from ..config.locate import ConfigLocator
    from ..settings import load_all
    from .runner import OriginalFailedError

    load_all()
    flags: dict[str, Any] = {each.ini: getattr(args, each.ini) for each in MUTATION_SETTINGS}
    values = FileSettings(
        ConfigLocator(Path.cwd()).locate(args.skill_dir),
        flags,
        flag_names={setting.ini: command_flag(setting) for setting in MUTATION_SETTINGS},
    )
    try:
        return _mutate(args, values)
    except KeyboardInterrupt:
        print(
            "agent-skills mutate: interrupted; the skill's files were not changed and the"
            " temporary copies are removed",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except OriginalFailedError as error:
        print(f"agent-skills mutate: error: {error}", file=sys.stderr)
        return EXIT_LOW


def _mutate(args: argparse.Namespace, values: Any) -> int:
    from ..files import write_atomic
    from .plan import MutationPlan, run_plan
    from .report import score_text

    plan = MutationPlan.from_settings(args.skill_dir, values, pytest_args=args.pytest)
    outcome = run_plan(plan, progress=None if args.quiet else _progress)
    text = outcome.render(args.format)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    report = outcome.report
    if args.format != "text" or args.output:
        print(score_text(report), file=sys.stderr)
    minimum = plan.min_score
    if minimum is not None and (report.summary.score or 0.0) < minimum:
        print(
            f"agent-skills mutate: the mutation score is below --min-score {minimum:g}",
            file=sys.stderr,
        )
        return EXIT_LOW
    return EXIT_OK


def _progress(line: str) -> None:
    print(f"agent-skills mutate: {line}", file=sys.stderr)
