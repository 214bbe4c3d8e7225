"""Request parameters (``--model-param`` / ``--grader-param`` and their twins) as settings:
the ``NAME=JSON`` syntax of flags, ini lines and environment variables, the precedence, and
the messages of values that are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agent_skills.config.file_settings import FileSettings
from pytest_agent_skills.config.runs import run_settings
from pytest_agent_skills.errors import ConfigurationError
from pytest_agent_skills.evals.setup.eval_options import EvalOptions, eval_options
from pytest_agent_skills.harness import RunSettings
from pytest_agent_skills.request_params import parse_params
from pytest_agent_skills.settings import ConfigFile, load_all

load_all()


def values(
    ini: dict[str, object],
    flags: dict[str, object] | None = None,
    environ: dict[str, str] | None = None,
) -> FileSettings:
    return FileSettings(
        ConfigFile(Path("pytest.ini"), ini),
        flags,
        environ=environ or {},
        flag_names={"skills_model_params": "--model-param"},
    )


def test_each_value_is_json_after_its_name() -> None:
    parsed = parse_params(
        ["temperature=0", 'tool_choice="auto"', "stop=[\"END\"]", "seed = 7", "top_p=0.5"],
        "command line",
        "--model-param",
    )
    assert parsed == {
        "temperature": 0,
        "tool_choice": "auto",
        "stop": ["END"],
        "seed": 7,
        "top_p": 0.5,
    }
    assert list(parsed) == ["temperature", "tool_choice", "stop", "seed", "top_p"]
    assert parse_params(["seed=1", "seed=2"], "here", "--model-param") == {"seed": 2}


def test_the_ini_option_is_one_name_json_a_line_and_the_environment_an_object_or_lines() -> None:
    from_ini = values({"skills_model_params": "\n  temperature=0\n  max_tokens=256\n"})
    assert from_ini("skills_model_params") == {"temperature": 0, "max_tokens": 256}
    from_toml = values({"skills_model_params": ["temperature=0", 'reasoning_effort="low"']})
    assert from_toml("skills_model_params") == {"temperature": 0, "reasoning_effort": "low"}
    env_object = values({}, environ={"SKILLS_MODEL_PARAMS": '{"seed": 7, "temperature": 0}'})
    assert env_object("skills_model_params") == {"seed": 7, "temperature": 0}
    env_lines = values({}, environ={"SKILLS_MODEL_PARAMS": "seed=7\ntemperature=0.2"})
    assert env_lines("skills_model_params") == {"seed": 7, "temperature": 0.2}


def test_the_command_line_replaces_the_environment_which_replaces_the_file_whole() -> None:
    ini = {"skills_model_params": "temperature=0\nseed=1"}
    environ = {"SKILLS_MODEL_PARAMS": '{"seed": 2}'}
    assert values(ini)("skills_model_params") == {"temperature": 0, "seed": 1}
    assert values(ini, environ=environ)("skills_model_params") == {"seed": 2}
    flags = {"skills_model_params": ["max_tokens=64"]}
    chosen = values(ini, flags, environ)
    assert chosen("skills_model_params") == {"max_tokens": 64}
    assert chosen.origin("skills_model_params") == "command line (--model-param)"


def test_the_run_settings_and_eval_options_carry_them() -> None:
    configured = values(
        {"skills_model_params": "temperature=0", "skills_grader_params": "max_tokens=512"}
    )
    assert run_settings(configured, environ={}).model_params == {"temperature": 0}
    options = eval_options(configured)
    assert options.settings.model_params == {"temperature": 0}
    assert options.grader_params == {"max_tokens": 512}
    assert RunSettings().model_params == {} and EvalOptions().grader_params == {}


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            {"flags": {"skills_model_params": ["temperature=zero"]}},
            "command line (--model-param): --skills-model-param temperature: the value 'zero' is"
            " not JSON (Expecting value: line 1 column 1 (char 0)); write text in double quotes:"
            ' temperature="zero"',
        ),
        (
            {"ini": {"skills_model_params": "seed"}},
            "pytest.ini: skills_model_params: --skills-model-param takes NAME=JSON (e.g."
            " temperature=0, tool_choice=\"auto\"), got 'seed'",
        ),
        (
            {"environ": {"SKILLS_MODEL_PARAMS": '{"seed": 7'}},
            "environment variable SKILLS_MODEL_PARAMS: --skills-model-param: not a JSON object",
        ),
        (
            {"environ": {"SKILLS_GRADER_PARAMS": '{"model": "other"}'}},
            "environment variable SKILLS_GRADER_PARAMS: --skills-grader-param model: the harness"
            " writes model, messages, tools of every request itself; the model has its own"
            " setting (skills_model, skills_grader_model), the conversation and its tools are"
            " the harness's",
        ),
        (
            {"flags": {"skills_model_params": ["messages=[]"]}},
            "command line (--model-param): --skills-model-param messages: the harness writes",
        ),
        (
            {"ini": {"skills_model_params": 'tools=[{"type": "function"}]'}},
            "pytest.ini: skills_model_params: --skills-model-param tools: the harness writes",
        ),
    ],
)
def test_a_value_that_is_not_json_or_a_field_of_the_harness_is_refused_where_it_was_set(
    where: dict[str, dict[str, object]], message: str
) -> None:
    configured = values(
        where.get("ini", {}),
        where.get("flags"),
        {key: str(value) for key, value in where.get("environ", {}).items()},
    )
    with pytest.raises(ConfigurationError) as raised:
        eval_options(configured)
    assert str(raised.value).startswith(message)


def test_parameters_given_in_code_are_checked_too() -> None:
    with pytest.raises(ConfigurationError, match=r"^model_params: request parameter tools: "):
        RunSettings(model_params={"tools": []})
    with pytest.raises(ConfigurationError, match=r"^grader_params: request parameter model: "):
        EvalOptions(grader_params={"model": "x"})
