"""SKILL.md as the reference runtime reads it (the protocol's view) next to our parse (the
validator's view), and skills nested in other skills: listed, loaded, collected and validated
as skills of their own.  tests/protocol/test_reference_parity.py checks the same against the
reference."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agent_skills.protocol import SkillSession
from pytest_agent_skills.repository import SkillRepository, find_skill_dirs
from pytest_agent_skills.rules import validate
from pytest_agent_skills.rules._validate import validate_paths
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.skill_reference import ReferenceReading
from tests.support.protocol import write_skills

NESTED = {
    "outer": {
        "SKILL.md": "---\nname: outer\ndescription: Holds another skill.\n---\nOuter body.\n",
        "docs/o.md": "outer doc\n",
        "inner/SKILL.md": "---\nname: inner\ndescription: Nested in outer.\n---\nInner body.\n",
        "inner/docs/i.md": "inner doc\n",
    }
}


def skill_from(tmp_path: Path, text: str, folder: str = "folder-name") -> Skill:
    directory = tmp_path / folder
    directory.mkdir()
    (directory / "SKILL.md").write_text(text, encoding="utf-8", newline="")
    return Skill.load(directory)


def rules_of(skill: Skill) -> set[str]:
    return {finding.rule for finding in validate(skill)}


@pytest.mark.parametrize(
    ("front", "name", "description"),
    [
        ("name: 123\ndescription: 1.50", "123", "1.5"),
        ("name: x\ndescription: yes", "x", "True"),
        ("name: x\ndescription: 2024-01-02", "x", "2024-01-02"),
        ("name: x\ndescription: [a, b]", "x", "['a', 'b']"),
        ("name: x\ndescription: {k: 1}", "x", "{'k': 1}"),
        ("name:\ndescription: null", "folder-name", ""),
        ("name: '  padded  '\ndescription: '  d  '", "padded", "d"),
    ],
    ids=["number", "boolean", "date", "list", "mapping", "null", "padded"],
)
def test_values_that_are_not_strings_reach_the_protocol_as_the_reference_prints_them(
    tmp_path, front, name, description
) -> None:
    skill = skill_from(tmp_path, f"---\n{front}\n---\nBody.\n")
    assert (skill.name, skill.description) == (name, description)


def test_one_field_of_the_reference_reading_is_the_one_of_all_its_fields() -> None:
    values = {"name": 1, " name ": "later wins", "description": None, 3: [1], "": "x", "m": {}}
    reading = ReferenceReading(values, "Body.")
    assert reading.fields == {"name": "later wins", "description": "", "3": "[1]", "m": "{}"}
    for name in ("name", "description", "3", "m", "absent", ""):
        assert reading.field(name) == reading.fields.get(name, "")


def test_the_validator_keeps_its_type_errors(tmp_path) -> None:
    skill = skill_from(tmp_path, "---\nname: 123\ndescription: yes\n---\nBody.\n")
    assert {"name-type", "description-type"} <= rules_of(skill)
    assert skill.fields == {"name": 123, "description": True}  # our parse keeps YAML types


@pytest.mark.parametrize(
    ("text", "finding"),
    [
        ("\ufeff---\nname: x\ndescription: d\n---\nBody.\n", "frontmatter-bom"),
        ("--- \nname: x\ndescription: d\n---\nBody.\n", "frontmatter-fence"),
        ("---\nname: x\ndescription: d\n---", None),
        ("---\n---\nBody.\n", "frontmatter-empty"),
    ],
    ids=["bom", "opening-fence-with-space", "closing-fence-at-end", "empty-front-matter"],
)
def test_where_the_reference_sees_no_front_matter_the_protocol_sees_none(
    tmp_path, text, finding
) -> None:
    skill = skill_from(tmp_path, text)
    assert (skill.name, skill.description) == ("folder-name", "")
    assert skill.runtime_body == text  # the whole text, fences included
    if finding:
        assert finding in {problem.rule for problem in skill.problems}


def test_a_closing_fence_with_a_trailing_space_is_read_as_the_reference_reads_it(
    tmp_path,
) -> None:
    text = "---\nname: x\ndescription: d\n--- \nBody\n---\nRest\n"
    skill = skill_from(tmp_path, text)
    # The next "\n---\n" ends its front matter; two YAML documents give no fields.
    assert (skill.name, skill.description, skill.runtime_body) == ("folder-name", "", "Rest\n")
    assert skill.fields == {"name": "x", "description": "d"}  # ours reads past the space


def test_crlf_and_a_plain_file_read_the_same_both_ways(tmp_path) -> None:
    text = "---\r\nname: x\r\ndescription: d\r\n---\r\nTools:\r\n- get_weather\r\n"
    skill = skill_from(tmp_path, text)
    assert (skill.name, skill.description, skill.tools) == ("x", "d", ["get_weather"])
    assert skill.runtime_body == skill.body == "Tools:\n- get_weather\n"


def test_the_tools_of_a_skill_the_reference_reads_without_front_matter(tmp_path) -> None:
    skill = skill_from(tmp_path, "\ufeff---\nname: x\ndescription: d\n---\nTools:\n- a\n")
    assert skill.tools == ["a"]
    assert skill.parsed.tools_section is not None and skill.parsed.tools_section.line == 5


def test_the_prompt_shows_the_body_the_reference_would(tmp_path) -> None:
    text = "\ufeff---\nname: bommed\ndescription: d\n---\nBody.\n"
    skill_from(tmp_path, text, "bom-skill")
    with SkillSession(SkillRepository([tmp_path])) as session:
        assert session.call("skill_load", {"skill_name": "bom-skill"}).is_error is False
        system = session.build_request([]).system
    assert "- bom-skill: \n" in system
    assert f"[Loaded] bom-skill\n\n{text}\n" in system


# --- nested skills ----------------------------------------------------------------------------


@pytest.fixture
def nested_root(tmp_path: Path) -> Path:
    return write_skills(tmp_path / "root", NESTED)


def test_a_skill_nested_in_another_is_a_skill_of_its_own(nested_root) -> None:
    assert [path.relative_to(nested_root).as_posix() for path in find_skill_dirs(nested_root)] == [
        "outer",
        "outer/inner",
    ]
    repository = SkillRepository([nested_root])
    assert repository.names() == ["inner", "outer"]
    assert repository.get("outer").docs == ("docs/o.md",)  # not the nested skill's files
    assert repository.get("inner").docs == ("docs/i.md",)
    with SkillSession(repository) as session:
        assert session.call("skill_load", {"skill_name": "inner"}).result == "skill 'inner' loaded"
        assert "[Loaded] inner\n\nInner body.\n" in session.build_request([]).system


def test_a_root_that_is_a_skill_still_yields_the_skills_inside_it(nested_root) -> None:
    outer = nested_root / "outer"
    assert list(find_skill_dirs(outer)) == [outer, outer / "inner"]


def test_validate_checks_each_nested_skill_on_its_own(nested_root) -> None:
    reports = validate_paths([nested_root])
    assert [(report.skill.name, report.ok) for report in reports] == [
        ("outer", True),
        ("inner", True),
    ]


def test_collection_makes_each_nested_skill_its_own_test_file(
    pytester: pytest.Pytester, nested_root: Path
) -> None:
    pytester.makeini(
        textwrap.dedent(
            f"""\
            [pytest]
            skills_roots = {nested_root}
            """
        )
    )
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    items = [line.split("::")[1:] for line in result.outlines if line.startswith("::")]
    assert [check for skill, check in items if skill == "outer"] == [
        check for skill, check in items if skill == "inner"
    ]
    assert {skill for skill, _check in items} == {"outer", "inner"}


def test_the_cli_and_a_repository_walk_a_link_loop_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The layout pytest collects in tests/collection/test_collection.py: each skill folder once,
    at its real path when the walk meets it there; what was not walked said once per link."""
    from pytest_agent_skills.cli import main
    from tests.support.skill_files import write_linked_repository

    write_linked_repository(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 1
    out, err = capsys.readouterr()
    assert [line.split(" [")[0] for line in out.splitlines() if "error [" in line] == [
        "skills/broken/SKILL.md:2: error",  # name-charset
        "skills/broken/SKILL.md:2: error",  # name-directory: the failing skill, once
    ]
    assert "3 skill(s) checked: 2 error(s), 0 warning(s); 1 skill(s) failed" in out
    assert err.splitlines() == [
        "agent-skills: plugins/shared -> ../skills: leads to skills, walked already",
        "agent-skills: plugins/uipath -> ..: a symbolic link back into a folder it is in,"
        " not followed",
    ]
    assert main(["validate", "."]) == 1  # a path given: walked alike
    out, err = capsys.readouterr()
    assert "3 skill(s) checked" in out and err.count("\n") == 2
    assert sorted(SkillRepository([tmp_path]).names()) == ["Broken", "alpha", "pdf"]
    assert [path.relative_to(tmp_path).as_posix() for path in find_skill_dirs(tmp_path)] == [
        "skills/alpha",
        "skills/broken",
        "plugins/pdf",
    ]
