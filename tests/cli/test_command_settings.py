"""The flags of the ``agent-skills`` commands come from the settings: every flag of every
command is a setting's (or one of the command's own switches, listed here), and for every
setting each command takes, its flag, its environment variable and its ini option reach the
same field of what the command builds (the eval options, the matrix bars, the validation and
audit options, the budgets, the mutation plan), with one precedence (flag > environment >
file > default)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from pytest_agent_skills import EvalClient, cli, settings
from pytest_agent_skills.config.audit import audit_options
from pytest_agent_skills.config.file_settings import FileSettings, add_command_flags
from pytest_agent_skills.config.locate import ConfigLocator
from pytest_agent_skills.config.validation import validation_options
from pytest_agent_skills.evals.setup.eval_options import eval_options
from pytest_agent_skills.gate.coverage_command import cassettes_folder, min_coverage
from pytest_agent_skills.gate.tokens_command import compare_threshold, token_budgets
from pytest_agent_skills.mutate.plan import MutationPlan
from pytest_agent_skills.settings import Setting
from tests.support.skill_files import write_skill

COMMANDS = tuple(command.name for command in cli.COMMANDS)

#: The flags of each command that are no setting (no ini option, no environment variable):
#: what this run of the command does or where its output goes, not how a repository
#: configures it.  A new flag is a setting (``commands=`` in its declaration) or is listed here.
OWN_SWITCHES: dict[str, set[str]] = {
    "validate": {"--format", "--exit-zero", "-o", "-j"},
    "audit": {"--format", "--runtime", "--cassettes", "-o"},
    "rules": set(),
    "rule": set(),
    "docker-image": {"--cache-dir"},
    "eval": {
        "--out", "--triggers", "--baseline", "--eval", "--regrade", "--calibrate", "--dry-run",
        "-q",
    },
    "grader-check": {"--format", "--out", "--gold", "-q"},
    "triggers": {"--out", "--dry-run", "-q"},
    "improve-description": {
        "--out", "--holdout", "--seed", "--iterations", "--write", "--baseline", "--dry-run", "-q",
    },
    "schema": {"--upgrade"},
    "mutate": {"--format", "-o", "-q", "--evals", "--eval", "--dry-run", "--pytest"},
    "tokens": {"--format", "-o", "--compare"},
    "coverage": {"--format", "-o"},
    "ci": {"--checks", "--fail-on", "--sarif", "--summary", "--exit-zero", "--github"},
}


class Built(NamedTuple):
    """What a command builds of its settings (None: what it does not build)."""

    values: FileSettings
    validation: Any = None
    evals: Any = None
    bars: Any = None
    audit: Any = None
    budgets: Any = None
    threshold: Any = None
    minimum: Any = None
    cassettes: Any = None
    plan: Any = None


def build(command: str, values: FileSettings) -> Built:
    """What ``command`` builds of ``values``, with the functions the command itself calls."""
    if command == "validate":
        return Built(values, validation=validation_options(values))
    if command == "audit":
        return Built(values, audit=audit_options(values))
    if command in ("tokens", "coverage", "ci"):
        return Built(
            values,
            budgets=token_budgets(values),
            threshold=compare_threshold(values),
            minimum=min_coverage(values),
            cassettes=cassettes_folder(values),
        )
    if command == "mutate":
        skill = write_skill(values.base_dir)
        plan = MutationPlan.from_settings(skill, values)
        return Built(values, evals=eval_options(values), plan=plan)
    if command == "docker-image":
        return Built(values)
    # The eval commands build the eval client of their settings.
    client = EvalClient.from_settings(values)
    return Built(values, evals=client.options, bars=client.bars)


def _resolved(ini: str) -> Callable[[Built], Any]:
    """A setting the command reads as it is (validate's --refresh, --changed-since)."""
    return lambda built: built.values(ini)


def _cassettes(built: Built) -> str:
    """The eval commands' cassette folder as given; the gate's from the configuration's
    folder."""
    if built.evals is not None:
        return str(built.evals.cassettes)
    return os.path.relpath(built.cassettes, built.values.base_dir)


#: Where each setting a command takes arrives, as the setting's own type (a list, a mapping).
FIELDS: dict[str, Callable[[Built], Any]] = {
    "skills_profile": lambda built: built.validation.profile.name,
    "skills_available_tools": lambda built: sorted(built.validation.available_tools),
    "skills_allow_unknown_fields": lambda built: built.validation.allow_unknown_fields,
    "skills_rule_severity": lambda built: [
        f"{r}={v}" for r, v in built.validation.severities.items()
    ],
    "skills_per_path_ignores": lambda built: [
        f"{ignore.pattern}:{','.join(sorted(ignore.rules))}"
        for ignore in built.validation.per_path_ignores
    ],
    "skills_refresh": _resolved("skills_refresh"),
    "skills_changed_since": _resolved("skills_changed_since"),
    "skills_record": lambda built: built.evals.record_mode,
    "skills_upstream_url": lambda built: built.evals.upstream.base_url,
    "skills_model": lambda built: built.evals.model,
    "skills_model_params": lambda built: dict(built.evals.settings.model_params),
    "skills_eval_runs": lambda built: built.evals.runs,
    "skills_eval_jobs": lambda built: built.evals.jobs,
    "skills_grader_model": lambda built: built.evals.grader,
    "skills_grader_params": lambda built: dict(built.evals.grader_params),
    "skills_eval_min_pass_rate": lambda built: built.evals.min_pass_rate,
    "skills_eval_require": lambda built: built.evals.require,
    "skills_eval_grader_runs": lambda built: built.evals.grader_runs,
    "skills_eval_models": lambda built: list(built.evals.models),
    "skills_eval_threshold": lambda built: built.evals.threshold,
    "skills_eval_cassettes": _cassettes,
    "skills_eval_attempts": lambda built: built.evals.retry.attempts,
    "skills_eval_runtime": lambda built: built.evals.runtime,
    "skills_eval_max_turns": lambda built: built.evals.max_turns,
    "skills_eval_max_run_tokens": lambda built: built.evals.max_run_tokens,
    "skills_eval_max_tokens": lambda built: built.evals.max_tokens,
    "skills_eval_allow_invalid": lambda built: built.evals.allow_invalid_skills,
    "skills_eval_trust_grader": lambda built: built.evals.trust_grader,
    "skills_eval_allow_same_grader": lambda built: built.evals.allow_same_grader,
    "skills_eval_grader_check": lambda built: built.evals.grader_check,
    "skills_grader_check_max_false_pass": lambda built: built.evals.max_false_pass,
    "skills_trigger_min_recall": lambda built: built.bars.min_recall,
    "skills_trigger_min_precision": lambda built: built.bars.min_precision,
    "skills_audit_fail_on": lambda built: built.audit.fail_on,
    "skills_audit_select": lambda built: sorted(built.audit.select),
    "skills_audit_ignore": lambda built: sorted(built.audit.ignore),
    "skills_audit_suppress": lambda built: [
        f"{each.where.pattern}:{','.join(sorted(each.where.rules))} -- {each.reason}"
        for each in built.audit.suppressions
    ],
    "skills_audit_dynamic": lambda built: built.audit.dynamic,
    "skills_budget_body": lambda built: built.budgets.body,
    "skills_budget_doc": lambda built: built.budgets.doc,
    "skills_budget_listing": lambda built: built.budgets.listing,
    "skills_budget_fail": lambda built: built.budgets.fail,
    "skills_tokens_threshold": lambda built: built.threshold,
    "skills_min_coverage": lambda built: built.minimum,
    "skills_mutation_min_score": lambda built: built.plan.min_score,
    "skills_mutation_seed": lambda built: built.plan.seed,
    "skills_mutation_max_mutants": lambda built: built.plan.max_mutants,
    "skills_mutation_jobs": lambda built: built.plan.limits.jobs,
    "skills_mutation_timeout": lambda built: built.plan.limits.timeout,
    "skills_docker_image": _resolved("skills_docker_image"),
}

#: Values the kind's samples would not make valid: flag, environment, file (a list's one item).
SAMPLES: dict[str, tuple[str, str, str]] = {
    "skills_rule_severity": ("body-too-long=off", "name-charset=warning", "body-too-long=error"),
    "skills_per_path_ignores": (
        "flag/*:body-too-long",
        "env/*:name-charset",
        "file/*:name-charset",
    ),
    "skills_upstream_url": ("http://flag.invalid/v1", "http://env.invalid/v1", "http://f.invalid"),
    "skills_model_params": ("seed=1", "seed=2", "seed=3"),
    "skills_grader_params": ("seed=1", "seed=2", "seed=3"),
    "skills_audit_select": ("bidi-control", "zero-width-run", "hidden-unicode-tags"),
    "skills_audit_ignore": ("bidi-control", "zero-width-run", "hidden-unicode-tags"),
    "skills_audit_suppress": (
        "flag/*:bidi-control -- quoted to detect it",
        "env/*:zero-width-run -- quoted to detect it",
        "file/*:bidi-control,zero-width-run -- quoted to detect it",
    ),
}


#: What else the configuration file must hold for the setting to be valid at all.
BESIDE = {
    "skills_available_tools": "skills_profile = trpc\n",
    # The default grader is the agent's own model: --require better asks for a judge apart.
    "skills_eval_require": "skills_eval_allow_same_grader = true\n",
}


def samples(setting: Setting) -> tuple[str, str, str]:
    """Three values for the flag, the environment and the file: distinct where the setting
    allows, never its default where it has another."""
    if setting.ini in SAMPLES:
        return SAMPLES[setting.ini]
    if setting.kind == "int":
        return "2", "3", "4"
    if setting.kind == "float":
        return "0.25", "0.5", "0.75"
    if setting.kind == "bool":  # the flag is a switch: it can only say true
        return "true", "false", "true"
    if setting.kind == "choice":
        others = [choice for choice in setting.choices if choice != setting.default]
        return (others[0], others[-1], others[len(others) // 2])
    return "from-flag", "from-env", "from-file"


def argv(setting: Setting, text: str) -> list[str]:
    if setting.kind == "bool":
        return [setting.command_flag_name]
    return [setting.command_flag_name, text]


def ini_line(setting: Setting, text: str) -> str:
    return f"{setting.ini} = {text}\n"


def expected(setting: Setting, text: str) -> Any:
    return settings.convert(setting, text, "test")


def parsed(command: str, words: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_command_flags(parser, command)
    return parser.parse_args(words)


def arrived(
    command: str, setting: Setting, tmp_path: Path, words: list[str], env: str | None, ini: str
) -> Any:
    """The field the setting reaches when ``agent-skills COMMAND WORDS`` runs with the
    variable set to ``env`` and the configuration file holding ``ini``."""
    beside = BESIDE.get(setting.ini, "")
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{beside}{ini}", encoding="utf-8")
    config = ConfigLocator(tmp_path).locate(tmp_path)
    values = FileSettings.of_command(config, parsed(command, words), command)
    values.environ = {} if env is None else {setting.env_name: env}
    built = build(command, values)
    assert built.values.base_dir == tmp_path
    return FIELDS[setting.ini](built)


CASES = [
    pytest.param(command, setting, id=f"{command}-{setting.ini}")
    for command in COMMANDS
    for setting in settings.command_settings(command)
]


@pytest.mark.parametrize(("command", "setting"), CASES)
def test_the_flag_the_environment_and_the_file_reach_the_same_field(
    command: str, setting: Setting, tmp_path: Path
) -> None:
    flag, env, ini = samples(setting)
    if setting.kind == "bool":  # each source alone says true; the default is false
        assert arrived(command, setting, tmp_path, [], None, "") is False
        assert arrived(command, setting, tmp_path, argv(setting, flag), None, "") is True
        assert arrived(command, setting, tmp_path, [], "true", "") is True
        assert arrived(command, setting, tmp_path, [], None, ini_line(setting, "true")) is True
        # The environment's false wins over the file's true.
        assert arrived(command, setting, tmp_path, [], "false", ini_line(setting, "true")) is False
        return
    by_flag = arrived(command, setting, tmp_path, argv(setting, flag), None, "")
    assert by_flag == expected(setting, flag)
    by_env = arrived(command, setting, tmp_path, [], env, "")
    assert by_env == expected(setting, env)
    by_file = arrived(command, setting, tmp_path, [], None, ini_line(setting, ini))
    assert by_file == expected(setting, ini)
    everything = (argv(setting, flag), env, ini_line(setting, ini))
    assert arrived(command, setting, tmp_path, *everything) == expected(setting, flag)
    assert arrived(command, setting, tmp_path, [], *everything[1:]) == expected(setting, env)


def command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of ``agent-skills COMMAND`` (its arguments as the program adds them)."""
    parser = argparse.ArgumentParser(prog=f"agent-skills {command}")
    next(each for each in cli.COMMANDS if each.name == command).configure(parser)
    return parser


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_of_a_command_is_made_from_a_setting_or_is_its_own_switch(
    command: str,
) -> None:
    made_from: dict[str, Setting] = {}
    own = set()
    for action in command_parser(command)._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue  # the positional arguments, --help
        setting = settings.REGISTRY.settings.get(action.dest)
        if setting is None:
            own.add(action.option_strings[0])
            continue
        # The flag as the setting's declaration makes it: its name, help (ini, variable and
        # default shown from the declaration), no default of its own (the file and the
        # environment can win).
        keywords = settings.flag_keywords(setting, setting.ini)
        assert action.option_strings == [setting.command_flag_name]
        assert (action.help, action.default) == (keywords["help"], None)
        assert action.metavar == keywords.get("metavar")
        made_from[setting.command_flag_name] = setting
    assert own == OWN_SWITCHES[command], (
        f"agent-skills {command}: a flag that is no setting: declare it with"
        f" commands=({command!r},) in its Setting, or list it in OWN_SWITCHES"
    )
    taken = settings.command_settings(command)
    assert sorted(made_from) == sorted(setting.command_flag_name for setting in taken)


def test_an_own_switch_is_no_setting_of_the_same_name() -> None:
    """A switch of a command is not the twin of a setting of the command: no setting the
    command takes is named like it (the eval settings' --runtime is no flag of audit)."""
    for command, switches in OWN_SWITCHES.items():
        flags = {setting.command_flag_name for setting in settings.command_settings(command)}
        assert switches & flags == set(), command


def test_every_setting_a_command_takes_has_its_field_here() -> None:
    taken = {setting.ini for command in COMMANDS for setting in settings.command_settings(command)}
    assert taken == set(FIELDS)


def test_one_model_given_to_eval_is_the_agent_model_several_run_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eval's --model is skills_eval_models' flag: given once, it is skills_model."""
    from pytest_agent_skills.evals.commands.eval_command import command_values, configure

    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser()
    configure(parser)
    one = eval_options(command_values(parser.parse_args([".", "--model", "solo"])))
    assert (one.model, one.models) == ("solo", ())
    several = eval_options(command_values(parser.parse_args([".", "--model", "a", "--model", "b"])))
    assert several.models == ("a", "b")
    values = command_values(parser.parse_args([".", "--model", "solo"]))
    assert values.origin("skills_model") == "command line (--model)"


def test_the_settings_of_commands_are_declared_where_commands_load_them() -> None:
    """A command loads only settings.COMMAND_SETTING_MODULES (no pytest): a setting that names a
    command and is declared elsewhere would have no flag there."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_agent_skills import settings as s\n"
            f"for c in {COMMANDS!r}: print(*(x.ini for x in s.command_settings(c)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    everywhere = [
        " ".join(setting.ini for setting in settings.load_all() if command in setting.commands)
        for command in COMMANDS
    ]
    assert loaded == everywhere


def test_a_default_worked_out_at_run_time_is_declared_in_words_not_in_the_help() -> None:
    """Such a default is the setting's ``default_shown``: words in its help would be followed
    by the ``default: (none)`` every flag's help ends with, in pytest --help, the README and
    every command."""
    assert [setting.ini for setting in settings.load_all() if "(default:" in setting.help] == []
