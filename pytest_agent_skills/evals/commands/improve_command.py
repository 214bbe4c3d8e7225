"""``agent-skills improve-description SKILL_DIR``: the description loop of :mod:`.improve`,
its candidates written to ``--out`` (description-candidates.json and report.html), the best
printed, and with ``--write`` put into SKILL.md (nothing else changed).  Exit 0 when it ran
(whether or not it beat the original), 2 on usage errors, 130 when stopped by Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .eval_command import EXIT_OK, add_dry_run, interrupted_status, interruptible


def configure(parser: argparse.ArgumentParser) -> None:
    from ...config.file_settings import add_command_flags

    parser.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill folder")
    parser.add_argument("--out", type=Path, default=Path("improve-out"), help="output folder")
    from ..triggers.improve import ImproveLoop

    loop = ImproveLoop()
    parser.add_argument(
        "--holdout",
        type=float,
        default=loop.holdout,
        metavar="SHARE",
        help=f"queries held out ({loop.holdout:g})",
    )
    parser.add_argument(
        "--seed", type=int, default=loop.seed, help=f"seed of the split ({loop.seed})"
    )
    parser.add_argument(
        "--iterations",
        type=int,
        default=loop.iterations,
        metavar="N",
        help=f"rounds at most ({loop.iterations})",
    )
    parser.add_argument(
        "--write", action="store_true", help="put the best description into SKILL.md"
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR|git:REF",
        help="start from the description of this earlier version of the skill (a folder, or"
        " git:REF for the skill as it was at a git ref) instead of its own",
    )
    # The flags of the settings improve-description takes (--runs, --threshold, ...).
    add_command_flags(parser, "improve-description")
    add_dry_run(parser, "print the runs and the most requests they may make, make none")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from ...config.file_settings import FileSettings
    from ...config.locate import ConfigLocator
    from ...settings import load_all
    from ..client.eval_client import EvalClient, ImproveLoop
    from ..report.folder import CANDIDATES_FILE

    load_all()
    config = ConfigLocator(Path.cwd()).locate(args.skill_dir)
    values = FileSettings.of_command(config, args, "improve-description")
    client = EvalClient.from_settings(values, None if args.quiet else sys.stderr)
    loop = ImproveLoop(args.holdout, args.seed, args.iterations)
    if args.dry_run:
        print(client.plan_improve(args.skill_dir, loop=loop, baseline=args.baseline))
        return EXIT_OK
    out: Path = args.out
    document, stopped = interruptible(
        lambda: client.improve(
            args.skill_dir, loop=loop, baseline=args.baseline, write=args.write, out=out
        )
    )
    for item in document.candidates:
        scores = (
            f"train {item.train.passed}/{item.train.total},"
            f" held out {item.test.passed}/{item.test.total}"
            if item.train is not None and item.test is not None
            else f"refused: {item.refused}"
        )
        print(f"candidate {item.iteration}: {scores}")
    print(f"best (candidate {document.best_iteration}):\n{document.best}")
    if args.write and document.best_iteration != 0:
        print(f"wrote the description into {Path(args.skill_dir) / 'SKILL.md'}")
    elif args.write:
        print("the original description is the best: SKILL.md is unchanged")
    print(f"wrote {out / CANDIDATES_FILE}")
    return interrupted_status() if stopped else EXIT_OK
