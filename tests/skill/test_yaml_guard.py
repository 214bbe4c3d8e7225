"""One guard against YAML alias bombs, for the SKILL.md front matter and scenario files;
anchors used as people use them still load.  Scenario files and (JSON) cassettes are read only
when they are regular files under their size caps."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pytest_agent_skills.harness import CassetteFormatError
from pytest_agent_skills.harness.cassette import MAX_CASSETTE_BYTES, Cassette
from pytest_agent_skills.scenario import (
    MAX_SCENARIO_BYTES,
    ScenarioError,
    load_scenarios,
    parse_scenarios,
)
from pytest_agent_skills.skill import Skill
from tests.support.skill_files import write_skill


def bomb(levels: int, indent: str = "") -> str:
    """Billion laughs: each level repeats the previous one nine times (9**levels values)."""
    lines = [f"{indent}a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"{indent}a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_in_the_front_matter_is_a_finding_at_its_line(tmp_path: Path) -> None:
    front = "name: laughs\ndescription: Laughs.\nmetadata:\n" + bomb(7, "  ")
    skill = Skill.load(write_skill(tmp_path, "laughs", front=front))
    assert [(p.rule, p.line, p.message) for p in skill.problems] == [
        (
            "frontmatter-yaml",
            10,  # a5: nine a4 are the first to go over
            "the front matter is refused: its aliases (*name) expand to more than 100000 values"
            " (an alias bomb?). Write the values out instead of repeating aliases.",
        )
    ]
    assert skill.reference.fields == {}  # nothing expanded on the reference's side either


def test_a_mapping_bomb_in_the_front_matter_is_refused_at_once(tmp_path: Path) -> None:
    rows = ["a0: &a0 {" + ", ".join(f"k{j}: lol" for j in range(9)) + "}"]
    for level in range(1, 9):
        items = ", ".join(f"k{j}: *a{level - 1}" for j in range(9))
        rows.append(f"a{level}: &a{level} {{{items}}}")
    front = "name: maps\ndescription: Maps.\n" + "\n".join(rows) + "\n"
    start = time.perf_counter()
    skill = Skill.load(write_skill(tmp_path, "maps", front=front))
    assert time.perf_counter() - start < 10, "9**8 mappings must not be built"
    assert [p.rule for p in skill.problems] == ["frontmatter-yaml"]


def test_anchors_as_people_use_them_still_load(tmp_path: Path) -> None:
    front = (
        "name: anchors\ndescription: Anchors.\nmetadata: &meta\n  owner: team\n"
        "x-copy: *meta\nx-self: &self [1, *self]\n"
    )
    skill = Skill.load(write_skill(tmp_path, "anchors", front=front))
    assert skill.problems == ()
    assert skill.fields["x-copy"] == {"owner": "team"}


SCENARIO = "user: Hi.\nmodel: {script: [{say: Hello.}]}\n"


def test_an_alias_bomb_in_a_scenario_is_a_scenario_error_at_its_line() -> None:
    text = SCENARIO + "tools:\n  t:\n    parameters:\n" + bomb(6, "      ")
    with pytest.raises(ScenarioError) as caught:
        parse_scenarios(text, Path("laughs.scenario.yaml"))
    assert str(caught.value) == (
        "laughs.scenario.yaml:11: refused: its aliases (*name) expand to more than 100000 values"
        " (an alias bomb?); write the values out instead of repeating aliases"
    )


def test_a_recursive_alias_in_a_scenario_is_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenarios("user: &u [*u]\nmodel: {script: [{say: x}]}\n", Path("self.scenario.yaml"))
    assert str(caught.value) == (
        "self.scenario.yaml:1: refused: an alias (*name) refers to a value that contains it (a"
        " recursive structure); write the values out instead of repeating aliases"
    )


def test_a_scenario_file_reusing_anchors_loads() -> None:
    """200 scenarios sharing one tool definition through an alias: far under the limit."""
    tool = "{description: Weather., parameters: {type: object, properties: {city: {type: string}}}}"
    entries = "".join(
        f"  - {{name: s{index}, user: Hi {index}., tools: {{weather: *weather}}}}\n"
        for index in range(200)
    )
    text = (
        f"model: {{script: [{{say: ok}}]}}\ntools: {{weather: &weather {tool}}}\n"
        f"scenarios:\n{entries}"
    )
    scenarios = parse_scenarios(text, Path("many.scenario.yaml"))
    assert len(scenarios) == 200
    assert scenarios[-1].tools["weather"]["description"] == "Weather."


def test_a_scenario_file_over_its_cap_or_not_a_regular_file_is_refused_unread(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.scenario.yaml"
    with open(big, "wb") as handle:  # sparse: nothing is written, the size is what counts
        handle.truncate(MAX_SCENARIO_BYTES + 1)
    pipe = tmp_path / "pipe.scenario.yaml"
    os.mkfifo(pipe)  # opening it would block until a writer comes

    with pytest.raises(ScenarioError) as too_big:
        load_scenarios(big)
    with pytest.raises(ScenarioError) as not_a_file:
        load_scenarios(pipe)

    assert str(too_big.value) == (
        f"{big}: is 16777217 bytes, over the limit of 16777216 bytes (16 MiB) for a scenario"
        " file; make it smaller (split it into several files)."
    )
    assert str(not_a_file.value) == (
        f"{pipe}: is a named pipe (FIFO), not a regular file; only regular files are read."
        " Replace it with a regular file."
    )


def test_a_cassette_over_its_cap_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(MAX_CASSETTE_BYTES + 1)

    with pytest.raises(CassetteFormatError) as caught:
        Cassette.load(big)

    assert str(caught.value) == (
        f"{big}: is 67108865 bytes, over the limit of 67108864 bytes (64 MiB) for a cassette;"
        " make it smaller (split it into several files)."
    )
