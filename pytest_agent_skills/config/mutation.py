"""The settings of mutation runs (``agent-skills mutate`` and the pytest mutation items):
declared once here; the command's flags and the pytest options both come from them."""

from __future__ import annotations

from .. import settings
from ..settings import Setting

MUTATION_SETTINGS = settings.declare(
    Setting(
        ini="skills_mutation_min_score",
        command_flag="--min-score",
        kind="float",
        metavar="SCORE",
        help="the least mutation score (killed / (killed + survived), 0 to 1) a skill's checks"
        " must reach; set, it adds a mutation item per skill to a pytest run, and makes"
        " agent-skills mutate exit 1 below it",
    ),
    Setting(
        ini="skills_mutation_seed",
        command_flag="--seed",
        kind="int",
        default=0,
        metavar="N",
        help="seed of the choice of mutants: the same skill and seed give the same mutants",
    ),
    Setting(
        ini="skills_mutation_max_mutants",
        command_flag="--max-mutants",
        kind="int",
        default=30,
        metavar="N",
        help="the most mutants made of a skill, chosen in turn from each operator",
    ),
    Setting(
        ini="skills_mutation_jobs",
        command_flag="--jobs",
        kind="int",
        default=1,
        metavar="N",
        help="mutants checked at once, each in a process of its own",
    ),
    Setting(
        ini="skills_mutation_timeout",
        command_flag="--timeout",
        kind="float",
        metavar="SECONDS",
        default_shown="ten times the original's, and 10 s more",
        help="time a mutant's checks may take before it counts as a timeout",
    ),
    commands=("mutate",),
    section="mutation",
)
