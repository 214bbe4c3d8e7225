"""The settings of repository-wide trigger evals (``agent-skills triggers``, and the pytest item
of the trigger matrix), declared at pytest's start-up: this module makes nothing else."""

from __future__ import annotations

from ... import settings
from ...settings import Setting

TRIGGER_SETTINGS = settings.declare(
    Setting(
        ini="skills_trigger_matrix",
        kind="bool",
        help="collect one item for the skills' trigger matrix: every evals/triggers.json query"
        " run with every skill offered, replayed, failing below the recall and precision bars",
    ),
    Setting(
        ini="skills_trigger_min_recall",
        commands=("triggers",),
        command_flag="--min-recall",
        kind="float",
        default=0.5,
        metavar="RATE",
        help="the recall every skill of the trigger matrix must reach (the share of the runs of"
        " its should-trigger queries that loaded it)",
    ),
    Setting(
        ini="skills_trigger_min_precision",
        commands=("triggers",),
        command_flag="--min-precision",
        kind="float",
        default=0.5,
        metavar="RATE",
        help="the precision every skill of the trigger matrix must reach (the share of the"
        " judged runs that loaded it where it was the query's owner)",
    ),
    section="evals",
)
