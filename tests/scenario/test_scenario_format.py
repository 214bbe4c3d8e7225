"""Loading scenario files: the shipped schema, YAML problems with their lines, the
documented example, and files holding several scenarios."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_agent_skills.scenario import (
    SCHEMA_PATH,
    ScenarioError,
    load_scenarios,
    parse_scenarios,
    scenario_schema,
)

DOCUMENTED = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


def parse(text: str, name: str = "t.scenario.yaml") -> list:
    return parse_scenarios(text, Path(name))


def error_of(text: str) -> str:
    with pytest.raises(ScenarioError) as caught:
        parse(text)
    return str(caught.value)


def test_the_schema_ships_with_the_package_and_is_a_valid_schema() -> None:
    from jsonschema import Draft202012Validator

    assert SCHEMA_PATH.name == "scenario.schema.json"
    assert SCHEMA_PATH.parent.name == "schemas"
    Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))
    keys = set(scenario_schema()["$defs"]["scenario"]["properties"])
    assert {
        "name",
        "skills",
        "runtime",
        "inputs",
        "env",
        "tools",
        "dynamic_tools",
        "user",
        "model",
        "expect",
        "scenarios",
    } <= keys


def test_the_documented_example_loads(tmp_path) -> None:
    example = re.search(r"```yaml\n(.*?)```", DOCUMENTED.read_text(), re.S).group(1)
    scenario = parse(example)[0]
    assert scenario.name == "weather report for Paris"
    assert scenario.inputs == {"data.csv": "city,temp\nParis,21\n", "raw.bin": b"\x00\x01\x02"}
    assert [turn.describe().split(" (")[0] for turn in scenario.script][
        -1
    ] == "say 'Saved the report.'"
    assert scenario.expect["calls"]["mode"] == "in_order"
    cassette = example.replace("  script:", "  cassette: cassettes/weather.json\n  unused:", 1)
    with pytest.raises(ScenarioError, match="unknown key 'unused' in model"):
        parse(cassette)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "user: [unclosed\n",
            "t.scenario.yaml:2: not valid YAML: did not find expected ',' or ']'",
        ),
        (
            "user: a\nuser: b\n",
            "t.scenario.yaml:2: the key 'user' appears twice in the same"
            " mapping; YAML would keep only the last one. Remove the duplicate.",
        ),
        (
            "- user: a\n",
            "t.scenario.yaml:1: a scenario file must be a YAML mapping with at least"
            " 'user:' and 'model:'",
        ),
        (
            "user: a\nmodel: {script: [{say: hi}]}\nexpect:\n  files: {path: x}\n",
            "t.scenario.yaml:4: expect.files: expected a list, found a mapping",
        ),
        (
            "user: a\nmodel: {script: [{say: hi}]}\ninputs: {x: 1}\n",
            "t.scenario.yaml:3: inputs.x: 1 is not valid under any of the given schemas",
        ),
        (
            "user: hi\n",
            "t.scenario.yaml:1: the scenario: 'model' is required (model: {script:"
            " [...]} or model: {cassette: file.json})",
        ),
        (
            "user: a\nmodel: {script: [{say: hi}]}\nscenarios:\n  - {scenarios: []}\n",
            "t.scenario.yaml:4: scenarios[0].scenarios: [] should be non-empty",
        ),
        (
            "user: a\nmodel: {script: [{say: hi}]}\nscenarios:\n  - {scenarios: [{user: x}]}\n",
            "t.scenario.yaml:4: 'scenarios' cannot be nested",
        ),
        (
            "user: a\nmodel:\n  script:\n    - {call: skill_run, args: [1]}\n",
            "t.scenario.yaml:4: model.script[0].args: expected a mapping or a string, found a list",
        ),
    ],
)
def test_problems_name_the_file_and_the_line(text, message) -> None:
    assert error_of(text) == message


def test_several_scenarios_share_the_top_level_keys() -> None:
    first, second = parse(
        "skills: [roots]\nenv: {A: '1'}\nmodel: {script: [{say: hi}]}\n"
        "scenarios:\n"
        "  - {user: one}\n"
        "  - name: two\n"
        "    user: two\n"
        "    env: {B: 2}\n"
        "    expect: {final: hi}\n"
    )
    assert (first.name, second.name) == ("t[0]", "two")
    assert first.skills == second.skills == ("roots",)
    assert (first.env, second.env) == ({"A": "1"}, {"B": "2"})
    assert second.line_of("expect", "final") == 9
    assert first.line_of("model") == 3, "a default keeps the line it was written on"
    assert second.where("env") == "t.scenario.yaml:8"


def test_a_single_scenario_is_named_after_its_file(tmp_path) -> None:
    path = tmp_path / "weather_check.scenario.yaml"
    path.write_text("user: hi\nmodel:\n  cassette: tapes/w.json\n  name: gpt-x\nmax_turns: 7\n")
    (scenario,) = load_scenarios(path)
    assert scenario.name == "weather_check"
    assert scenario.cassette == tmp_path / "tapes" / "w.json"
    assert (scenario.model_name, scenario.max_turns, scenario.script) == ("gpt-x", 7, None)


def test_an_unreadable_file_is_a_scenario_error(tmp_path) -> None:
    path = tmp_path / "latin.scenario.yaml"
    path.write_bytes(b"user: caf\xe9\n")
    with pytest.raises(
        ScenarioError, match=r"latin\.scenario\.yaml: cannot read the scenario file"
    ):
        load_scenarios(path)
