"""``agent-skills grader-check``: the grader model on the shipped gold set (see
:mod:`..suite.grader_check`); exit 0 when its false-pass rate is at most ``--max-false-pass``,
1 above it, 2 on usage errors.  Its flags are those of the settings that name it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_ABOVE = 0, 1


def configure(parser: argparse.ArgumentParser) -> None:
    from ...config.file_settings import add_command_flags

    # --grader-model, --grader-param, --grader-runs, --record, --upstream-url, ...: the flags
    # of the settings that name grader-check among their commands.
    add_command_flags(parser, "grader-check")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (text)"
    )
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="also write grader-check.json to FILE"
    )
    parser.add_argument(
        "--gold",
        type=Path,
        metavar="FILE",
        help="a gold set of your own instead of the shipped one (the same JSON shape)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from ...config.file_settings import FileSettings
    from ...config.locate import ConfigLocator
    from ..setup.eval_options import eval_options
    from ..suite.grader_check import load_gold, run_grader_check, text_report, write_document

    located = ConfigLocator(Path.cwd()).locate(Path.cwd())
    values = FileSettings.of_command(located, args, "grader-check")
    options = eval_options(values)
    gold = load_gold(args.gold)
    check = run_grader_check(options, gold, None if args.quiet else sys.stderr)
    if args.out:
        write_document(args.out, check)
    if args.format == "json":
        print(check.to_json())
    else:
        print(text_report(check))
    return EXIT_OK if check.passed else EXIT_ABOVE
