"""``agent-skills mutate SKILL_DIR``: make mutants of a skill, run its checks against each,
report which the checks killed and which survived.  Exit 0, 1 below ``--min-score`` (or when
the checks cannot run), 2 on usage errors, 130 when stopped by Ctrl-C (nothing is written)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..config.file_settings import add_command_flags
from ..settings import Setting, load_all

EXIT_OK, EXIT_LOW, EXIT_INTERRUPTED = 0, 1, 130


def _of_mutation(setting: Setting) -> bool:
    """A setting of the mutation run itself (config/mutation.py), not of ``--evals``."""
    return setting.section == "mutation"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill folder")
    parser.add_argument(
        "--format", choices=("text", "json", "html"), default="text", help="report format"
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file, not stdout")
    # The flags of the settings mutate takes: the run's (--min-score, --seed, ...) here, the
    # eval settings of --evals (--runs, --model, ...) in its group.
    add_command_flags(parser, "mutate", only=_of_mutation)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    evals = parser.add_argument_group(
        "--evals", "the skill's evals.json through the eval pipeline, each mutant against the"
        " original (agent-skills eval's settings)",
    )
    evals.add_argument(
        "--evals",
        action="store_true",
        help="instead of the scenarios: evals/evals.json, the original as each mutant's"
        " baseline; killed when an eval's verdict is worse; runs stop at the verdict",
    )
    evals.add_argument(
        "--eval", type=int, action="append", dest="only", metavar="ID", help="only this eval"
    )
    evals.add_argument(
        "--dry-run",
        action="store_true",
        help="with --evals: print the mutants and the runs each may make, make none",
    )
    add_command_flags(evals, "mutate", only=lambda setting: not _of_mutation(setting))
    parser.add_argument(
        "--pytest",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="instead of the scenarios: the repository's pytest run (with ARGS, the rest of the"
        " command line), the mutant in place of the skill, in a temporary copy of the"
        " repository",
    )


def run(args: argparse.Namespace) -> int:
    from ..config.command_line import check_output
    from ..config.file_settings import FileSettings
    from ..config.locate import ConfigLocator
    from .runner import OriginalFailedError

    check_output(args.output)
    load_all()  # the settings the run reads beside its flags (the runtime, the transport...)
    values = FileSettings.of_command(
        ConfigLocator(Path.cwd()).locate(args.skill_dir), args, "mutate"
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
    from ..config.command_line import write_report
    from .operators import MutateError
    from .plan import MutationPlan, dry_run_text, run_plan
    from .report import score_text

    if args.evals and args.pytest is not None:
        raise MutateError("--evals and --pytest each choose what runs against a mutant: give one")
    if args.dry_run and not args.evals:
        raise MutateError("--dry-run plans the model runs of --evals: give --evals too")
    evals = (tuple(args.only or ()) if args.evals else None)
    plan = MutationPlan.from_settings(
        args.skill_dir, values, pytest_args=args.pytest, evals=evals
    )
    if args.dry_run:
        print(dry_run_text(plan))
        return EXIT_OK
    outcome = run_plan(plan, progress=None if args.quiet else _progress)
    text = outcome.render(args.format)
    write_report(args.output, text)
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
