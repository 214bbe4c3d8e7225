"""The settings of the CI gate's numbers: token budgets (``agent-skills tokens``) and eval
coverage (``agent-skills coverage``), and the threshold of a token comparison against a git
ref.

The budgets' defaults are published figures: a body of 800 to 2,500 tokens is the useful size
(SkillsBench; "comprehensive" bodies score worse than none), the spec recommends under 5,000
tokens for what one load brings in, and Claude Code keeps about 1% of the context (2,000 of
200,000 tokens) for the list of skills.  Being over one is reported; it fails a run only with
``skills_budget_fail`` (off by default: the figures are guidance, a gate on them would fail
good skills).
"""

from __future__ import annotations

from .. import settings
from ..settings import Setting
from . import roots  # noqa: F401 - the shared settings come first in the registry and --help

GATE_SETTINGS = settings.declare(
    Setting(
        ini="skills_budget_body",
        commands=("tokens",),
        kind="int",
        default=2500,
        metavar="TOKENS",
        help="token budget of a skill's body, paid when it loads (agent-skills tokens; the"
        " default is the upper end of the useful size SkillsBench measured)",
    ),
    Setting(
        ini="skills_budget_doc",
        commands=("tokens",),
        kind="int",
        default=5000,
        metavar="TOKENS",
        help="token budget of each doc of a skill, paid when the agent reads it (agent-skills"
        " tokens; the spec's advice for what one load brings in)",
    ),
    Setting(
        ini="skills_budget_listing",
        commands=("tokens",),
        kind="int",
        default=2000,
        metavar="TOKENS",
        help="token budget of every skill's name and description together, paid on every"
        " request (agent-skills tokens; about a hundredth of a 200,000-token context, what"
        " Claude Code keeps for the list of skills)",
    ),
    Setting(
        ini="skills_budget_fail",
        commands=("tokens", "ci"),
        kind="bool",
        help="make a token budget exceeded an error (agent-skills tokens exits 1); off by"
        " default, where it is reported as a warning",
    ),
    Setting(
        ini="skills_tokens_threshold",
        commands=("tokens",),
        command_flag="--threshold",
        kind="float",
        default=0.1,
        metavar="RATE",
        help="with agent-skills tokens --compare REF: the growth of a skill's tokens (its"
        " description and body) past which the comparison fails, as a rate (0.1: a tenth more)",
    ),
    Setting(
        ini="skills_min_coverage",
        commands=("coverage", "ci"),
        kind="float",
        default=0.0,
        metavar="RATE",
        help="the share of skills (0 to 1) that must have recorded evals or trigger queries"
        " (agent-skills coverage exits 1 below it; 0: report only)",
    ),
)
