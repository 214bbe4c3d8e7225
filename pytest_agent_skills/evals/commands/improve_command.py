"""``agent-skills improve-description SKILL_DIR``: the description loop of :mod:`.improve`,
its candidates written to ``--out`` (description-candidates.json and report.html), the best
printed, and with ``--write`` put into SKILL.md (nothing else changed).  Exit 0 when it ran
(whether or not it beat the original), 2 on usage errors, 130 when stopped by Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from .eval_command import EXIT_INTERRUPTED, EXIT_OK, add_dry_run


def configure(parser: argparse.ArgumentParser) -> None:
    from ...config.file_settings import add_command_flags

    parser.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill folder")
    parser.add_argument("--out", type=Path, default=Path("improve-out"), help="output folder")
    parser.add_argument(
        "--holdout", type=float, default=0.4, metavar="SHARE", help="queries held out (0.4)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the split (0)")
    parser.add_argument("--iterations", type=int, default=5, metavar="N", help="rounds at most (5)")
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
    from ..setup.eval_options import eval_options
    from ..triggers.improve import ImproveRequest

    load_all()
    config = ConfigLocator(Path.cwd()).locate(args.skill_dir)
    values = FileSettings.of_command(config, args, "improve-description")
    with tempfile.TemporaryDirectory(prefix="agent-skills-baseline-") as scratch:
        start, ref, commit = _start(args.baseline, args.skill_dir, Path(scratch))
        request = ImproveRequest(
            args.skill_dir,
            eval_options(values),
            holdout=args.holdout,
            seed=args.seed,
            iterations=args.iterations,
            progress=None if args.quiet else sys.stderr,
            start_description=start,
            start_ref=ref,
            start_commit=commit,
        )
        return _run_request(args, request)


def _start(spec: str | None, skill_dir: Path, scratch: Path) -> tuple[str | None, str, str]:
    """The description of ``--baseline`` (None without one), its git ref and commit."""
    from ...skill import Skill
    from ..triggers.improve import ImproveError
    from .eval_command import baseline_folder

    folder, ref, commit = baseline_folder(spec, skill_dir, scratch)
    if folder is None:
        return None, "", ""
    if not (folder / "SKILL.md").is_file():
        raise ImproveError(f"--baseline {spec}: not a skill folder (no SKILL.md)")
    return Skill.load(folder).description, ref, commit


def _run_request(args: argparse.Namespace, request: Any) -> int:
    """The loop (or its dry run) of ``request``, written to ``--out`` and printed."""
    from ...files import write_atomic
    from ..documents.document_io import write_data
    from ..documents.triggers import CandidatesDocument
    from ..suite.output_folder import write_report
    from ..triggers.description_edit import replace_description
    from ..triggers.improve import CANDIDATES_FILE, improve_description, improve_dry_run

    if args.dry_run:
        print(improve_dry_run(request))
        return EXIT_OK
    outcome = improve_description(request)
    out: Path = args.out
    write_data(out / CANDIDATES_FILE, CandidatesDocument, outcome.document)
    write_report(out)
    for item in outcome.document["candidates"]:
        scores = (
            f"train {item['train']['passed']}/{item['train']['total']},"
            f" held out {item['test']['passed']}/{item['test']['total']}"
            if item["test"]
            else f"refused: {item['refused']}"
        )
        print(f"candidate {item['iteration']}: {scores}")
    print(f"best (candidate {outcome.document['best_iteration']}):\n{outcome.best}")
    if args.write and outcome.document["best_iteration"] != 0:
        skill_file = Path(args.skill_dir) / "SKILL.md"
        text = skill_file.read_bytes().decode("utf-8")
        write_atomic(skill_file, replace_description(text, outcome.best))
        print(f"wrote the description into {skill_file}")
    elif args.write:
        print("the original description is the best: SKILL.md is unchanged")
    print(f"wrote {out / CANDIDATES_FILE}")
    return EXIT_INTERRUPTED if outcome.interrupted else EXIT_OK
