"""The settings of skill evals, declared at pytest's start-up: this module makes nothing
else (the options they build live in
:mod:`~pytest_agent_skills.evals.setup.eval_options`, imported when evals run)."""

from __future__ import annotations

from ... import settings
from ...settings import Setting
from ...workspace.names import RUNTIME_NAMES

#: Requests made at most for one upstream answer (see ``RetryPolicy``).
DEFAULT_ATTEMPTS = 5
#: Model turns one eval run may take.
DEFAULT_MAX_TURNS = 30

EVAL_SETTINGS = settings.declare(
    Setting(
        ini="skills_eval_runs",
        commands=("eval", "triggers", "improve-description", "mutate"),
        command_flag="--runs",
        kind="int",
        default=3,
        metavar="N",
        help="runs of each eval per configuration (with and without the skill)",
    ),
    Setting(
        ini="skills_eval_jobs",
        commands=("eval", "triggers", "improve-description", "grader-check"),
        command_flag="--jobs",
        kind="int",
        default=4,
        metavar="J",
        help="eval runs (conversations) going on at once",
    ),
    Setting(
        ini="skills_grader_model",
        commands=("eval", "grader-check", "mutate"),
        metavar="MODEL",
        default_shown="skills_model",
        help="model grading the string expectations of evals, on the same endpoint",
    ),
    Setting(
        ini="skills_grader_params",
        commands=("eval", "grader-check", "mutate"),
        kind="params",
        flag="--skills-grader-param",
        metavar="NAME=JSON",
        help="a field added to every request of the grader (repeatable; e.g. temperature=0,"
        " max_tokens=1024); recorded in the grader cassettes and matched; ini: one NAME=JSON a"
        " line; env: a JSON object or NAME=JSON lines",
    ),
    Setting(
        ini="skills_eval_min_pass_rate",
        commands=("eval",),
        command_flag="--min-pass-rate",
        kind="float",
        default=1.0,
        metavar="RATE",
        help="the mean pass rate with the skill every eval must reach",
    ),
    Setting(
        ini="skills_eval_require",
        commands=("eval",),
        command_flag="--require",
        kind="choice",
        choices=("none", "better"),
        default="none",
        metavar="VERDICT",
        help="better: an eval passes only when its verdict is better, the 95 percent interval"
        " of its delta above 0 (besides skills_eval_min_pass_rate)",
    ),
    Setting(
        ini="skills_eval_grader_runs",
        commands=("eval", "grader-check"),
        command_flag="--grader-runs",
        kind="int",
        default=1,
        metavar="K",
        help="grade each run's transcript K times and report how often the grader agrees with"
        " itself per expectation; an expectation the gradings disagree on is never a pass",
    ),
    Setting(
        ini="skills_eval_trust_grader",
        commands=("eval", "grader-check"),
        command_flag="--trust-grader",
        kind="bool",
        help="take the grader's passes as it gives them; by default a pass counts only when one"
        " of the grader's quotes is found in the run (else it is an unsupported pass, a fail)",
    ),
    Setting(
        ini="skills_eval_allow_same_grader",
        commands=("eval",),
        command_flag="--allow-same-grader",
        kind="bool",
        help="allow skills_eval_require better with a grader that is the agent's model or of its"
        " family by name (refused otherwise: a judge of its own family)",
    ),
    Setting(
        ini="skills_eval_grader_check",
        commands=("eval",),
        command_flag="--grader-check",
        kind="bool",
        help="run the grader on the shipped gold set first (as agent-skills grader-check) and"
        " write its accuracy and false-pass rate into benchmark.json and the report",
    ),
    Setting(
        ini="skills_grader_check_max_false_pass",
        commands=("grader-check",),
        command_flag="--max-false-pass",
        kind="float",
        default=0.1,
        metavar="RATE",
        help="agent-skills grader-check exits 1 when the grader's false-pass rate on the gold"
        " set is above this rate",
    ),
    Setting(
        ini="skills_eval_models",
        commands=("eval",),
        command_flag="--model",
        kind="list",
        metavar="MODEL",
        help="run the evals on each of these agent models (instead of skills_model): one output"
        " folder DIR/<model>/ each and DIR/models.json, the overview (agent-skills eval: --model"
        " repeated; given once, it is skills_model)",
    ),
    Setting(
        ini="skills_eval_threshold",
        commands=("eval", "improve-description"),
        command_flag="--threshold",
        kind="float",
        default=0.5,
        metavar="RATE",
        help="trigger rate from which a trigger query counts as triggering the skill",
    ),
    Setting(
        ini="skills_eval_cassettes",
        commands=(
            "eval", "triggers", "improve-description", "coverage", "ci", "grader-check", "mutate"
        ),
        command_flag="--cassettes",
        metavar="DIR",
        default_shown="eval-cassettes in the folder of the configuration file",
        help="folder of the eval cassettes, a subfolder per skill; never inside a skill folder",
    ),
    Setting(
        ini="skills_eval_attempts",
        commands=("eval", "triggers", "improve-description", "grader-check"),
        command_flag="--attempts",
        kind="int",
        default=DEFAULT_ATTEMPTS,
        metavar="N",
        help="requests made at most for one upstream answer while recording (HTTP 429 and 5xx"
        " are asked again after a backoff honouring Retry-After)",
    ),
    Setting(
        ini="skills_eval_runtime",
        commands=("eval", "triggers", "improve-description", "mutate"),
        command_flag="--runtime",
        kind="choice",
        choices=RUNTIME_NAMES,
        default_shown="sandbox when bubblewrap works, else docker when its engine and image are"
        " there, else the eval refuses to run",
        help="where the commands the model chooses run: sandbox (bubblewrap) or docker, without"
        " network; local runs them on this machine and is only ever asked for",
    ),
    Setting(
        ini="skills_eval_max_turns",
        commands=("eval", "mutate"),
        command_flag="--max-turns",
        kind="int",
        default=DEFAULT_MAX_TURNS,
        metavar="N",
        help="model turns one eval run may take; a run stopped there is a failed run"
        " (stop_reason turn_limit), graded on what it did",
    ),
    Setting(
        ini="skills_eval_max_run_tokens",
        commands=("eval", "mutate"),
        command_flag="--max-run-tokens",
        kind="int",
        metavar="N",
        default_shown="no cap",
        help="tokens (usage.total_tokens) one eval run's requests may use; past them the run"
        " stops, a failed run (stop_reason run_tokens) graded on what it did",
    ),
    Setting(
        ini="skills_eval_max_tokens",
        commands=("eval", "triggers", "improve-description", "mutate"),
        command_flag="--max-tokens",
        kind="int",
        metavar="N",
        default_shown="no budget",
        help="tokens the whole eval may use, grader included; once spent no run starts (the"
        " runs not started are skipped, stop_reason budget)",
    ),
    Setting(
        ini="skills_eval_allow_invalid",
        commands=("eval", "triggers", "improve-description"),
        command_flag="--allow-invalid-skills",
        kind="bool",
        help="offer skills whose front matter validate finds invalid to the model anyway"
        " (saying what it will see of them); by default such a skill stops the eval, the"
        " trigger matrix and the description loop before any request",
    ),
    section="evals",
)
