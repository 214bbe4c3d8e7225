"""``agent-skills triggers [PATH...]``: the trigger matrix of the skills under the paths (found
as ``validate`` and pytest find them), written to ``--out``; exit 0 when every skill meets
the recall and precision bars, 1 when one falls short or a run failed, 2 on usage errors,
130 when stopped by Ctrl-C (what finished is written)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .eval_command import (
    EXIT_OK,
    EXIT_SHORT,
    add_dry_run,
    interrupted_status,
    interruptible,
)

if TYPE_CHECKING:
    from ..documents.triggers import MatrixDocument
    from ..verdicts.matrix_text import MatrixText


def configure(parser: argparse.ArgumentParser) -> None:
    from ...config.command_line import add_paths_argument
    from ...config.file_settings import add_command_flags

    add_paths_argument(parser)
    parser.add_argument("--out", type=Path, default=Path("triggers-out"), help="output folder")
    # The flags of the settings triggers takes (--runs, --min-recall, ...).
    add_command_flags(parser, "triggers")
    add_dry_run(parser, "print the runs and the most requests they may make, make none")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace, targets: Sequence[Path]) -> int:
    """Run the matrix of the skills under ``targets`` (the paths as ``validate`` chose them)."""
    from ...config.file_settings import FileSettings
    from ...config.locate import ConfigLocator
    from ...settings import load_all
    from ..client.eval_client import EvalClient
    from ..report.folder import MATRIX_FILE

    load_all()
    start = targets[0] if targets else Path.cwd()
    values = FileSettings.of_command(ConfigLocator(Path.cwd()).locate(start), args, "triggers")
    ref = values("skills_changed_since")
    if ref and not matrix_reached(targets, ref):
        return EXIT_OK
    client = EvalClient.from_settings(values, None if args.quiet else sys.stderr)
    if args.dry_run:
        print(client.plan_matrix(targets))
        return EXIT_OK
    out: Path = args.out
    document, stopped = interruptible(lambda: client.matrix(targets, out=out))
    text = print_matrix(document)
    print(f"wrote {out / MATRIX_FILE}")
    if stopped:
        return interrupted_status()
    return EXIT_SHORT if text.failed else EXIT_OK


def matrix_reached(targets: Sequence[Path], ref: str) -> bool:
    """Whether a change since the git ``ref`` reaches the trigger matrix of the skills under
    ``targets``, said on stderr: a name or description changed (every query's outcome may
    change), or a changed skill has trigger queries.  The matrix then runs whole: every query
    is asked with every skill offered."""
    from ...changes import changed_since
    from ...rules import skill_dirs
    from ..setup.eval_files import TRIGGERS_FILE

    folders = list(dict.fromkeys(folder for path in targets for folder in skill_dirs(path)))
    split = changed_since(folders, ref, folders[0] if folders else Path.cwd())
    queried = [folder for folder in split.changed if (folder / TRIGGERS_FILE).is_file()]
    if split.reaches_all:
        print(f"agent-skills: {split.reach()}", file=sys.stderr)
    elif queried:
        print(
            f"agent-skills: {len(queried)} changed skill(s) with trigger queries: the matrix"
            " runs whole (every query with every skill offered)",
            file=sys.stderr,
        )
    else:
        print(
            f"agent-skills: no name or description changed since {ref} and no changed skill"
            " has trigger queries: the trigger matrix is not run",
            file=sys.stderr,
        )
    return split.reaches_all or bool(queried)


def print_matrix(document: MatrixDocument) -> MatrixText:
    """Each skill's scores (those below a bar marked), the worst collisions, the errors (on
    stderr) and the runs skipped; returns the text, which says whether the matrix failed."""
    from ..verdicts.matrix_text import matrix_text

    text = matrix_text(document)
    for line in (*text.skills, *text.collisions):
        print(line)
    if text.errors:
        print(text.errors, file=sys.stderr)
    if text.skipped:
        print(text.skipped)
    print(text.summary)
    return text
