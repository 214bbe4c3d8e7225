"""SKILL.md parsing (skill.py): fences, YAML types, duplicate keys, encodings, the
reference's Tools: grammar, docs and scripts discovery - each with its line number."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest
import yaml

from pytest_agent_skills.findings import Severity
from pytest_agent_skills.skill import (
    Skill,
    SkillNotFoundError,
    SkillParseError,
    parse_skill_text,
)
from tests.support.skill_files import write_skill

PATH = Path("s/SKILL.md")


def problems(text: str) -> list[tuple[str, int | None, Severity]]:
    return [(p.rule, p.line, p.severity) for p in parse_skill_text(text, PATH).problems]


def test_values_keep_their_yaml_types() -> None:
    text = (
        "---\nname: x\ndescription: D.\nflag: yes\nwhen: 2024-01-02\nprice: 1.50\n"
        "tags: [a, b]\nfolded: >\n  line1\n  line2\n---\nbody\n"
    )
    values = parse_skill_text(text, PATH).front_matter.values
    assert values["flag"] is True
    assert values["when"] == datetime.date(2024, 1, 2)
    assert values["price"] == 1.5
    assert values["tags"] == ["a", "b"]
    assert values["folded"] == "line1 line2"


def test_key_lines_and_body_line() -> None:
    parsed = parse_skill_text("---\nname: x\n\ndescription: D.\n---\nbody\n", PATH)
    assert parsed.front_matter.key_lines == {"name": 2, "description": 4}
    assert (parsed.front_matter.open_line, parsed.front_matter.close_line) == (1, 5)
    assert (parsed.body, parsed.body_line) == ("body\n", 6)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", [("frontmatter-missing", 1, Severity.ERROR)]),
        ("   \n\n", [("frontmatter-missing", 1, Severity.ERROR)]),
        ("# Title\nname: x\n", [("frontmatter-missing", 1, Severity.ERROR)]),
        ("\n---\nname: x\n---\n", [("frontmatter-missing", 1, Severity.ERROR)]),
        ("---\nname: x\ndescription: D.\n", [("frontmatter-unclosed", 1, Severity.ERROR)]),
        ("---\n---\nbody\n", [("frontmatter-empty", 1, Severity.ERROR)]),
        ("---\nname: x\n  bad: [\n---\n", [("frontmatter-yaml", 3, Severity.ERROR)]),
        ("---\ndescription: Use when: a\n---\n", [("frontmatter-yaml", 2, Severity.ERROR)]),
        ("---\n- a\n- b\n---\n", [("frontmatter-not-mapping", 2, Severity.ERROR)]),
        ("---\njust text\n---\n", [("frontmatter-not-mapping", 2, Severity.ERROR)]),
        (
            "---\nname: x\ndescription: D.\nname: y\n---\n",
            [("frontmatter-duplicate-key", 4, Severity.ERROR)],
        ),
        (
            "---\nname: x\nmetadata:\n  a: 1\n  a: 2\n---\n",
            [("frontmatter-duplicate-key", 5, Severity.ERROR)],
        ),
        ("\ufeff---\nname: x\n---\n", [("frontmatter-bom", 1, Severity.WARNING)]),
        ("--- \nname: x\n---\n", [("frontmatter-fence", 1, Severity.WARNING)]),
        ("---\nname: x\n--- \nbody\n", [("frontmatter-fence", 3, Severity.WARNING)]),
        ("---\r\nname: x\r\ndescription: D.\r\n---\r\nbody\r\n", []),
    ],
)
def test_front_matter_problems_with_lines(text: str, expected: list[tuple]) -> None:
    assert problems(text) == expected


def test_malformed_yaml_never_becomes_an_empty_mapping() -> None:
    parsed = parse_skill_text("---\nname: [x\n---\n", PATH)
    assert parsed.front_matter is None
    assert [p.rule for p in parsed.problems] == ["frontmatter-yaml"]


def test_messages_say_how_to_fix() -> None:
    (finding,) = parse_skill_text("---\nname: x\nname: y\n---\n", PATH).problems
    assert finding.format() == (
        "s/SKILL.md:3: error [frontmatter-duplicate-key] the key 'name' appears more than once;"
        " YAML keeps only the last one. Remove the duplicate."
    )
    (unclosed,) = parse_skill_text("---\nname: x\n", PATH).problems
    assert unclosed.message == (
        "the front matter opened on line 1 is never closed. Add a line '---' after the last"
        " field (name, description, ...)."
    )


# The reference's Tools: grammar (trpc-agent-py 1.2.0), one row per case.
@pytest.mark.parametrize(
    ("body", "tools"),
    [
        ("Tools:\n- a\n- b\n", ["a", "b"]),
        ("TOOLS: ignored text\n- a\n", ["a"]),
        ("## Tools:\n- a\n", []),
        ("**Tools:**\n- a\n", []),
        ("Toolsets:\n- a\n", []),
        ("Tools:\n- a  # note\n", ["a  # note"]),
        ("Tools:\n- get_weather: fetch\n", ["get_weather: fetch"]),
        ("Tools:\n- `a`\n", ["`a`"]),
        ("Tools:\n---\n", ["--"]),
        ("Tools:\n-a\n", ["a"]),
        ("Tools:\n- a\n# - old_api\n-\n- # gone\n", ["a"]),
        ("Tools:\n* a\n+ b\n1. c\n- d\n", ["d"]),
        ("Tools:\n  - a\n    - b\n", ["a", "b"]),
        ("Tools:\n- a\n- a\n", ["a", "a"]),
        ("Tools:\n- a\n\n## Usage\n- step one\n", ["a", "step one"]),
        ("Tools:\n- a\nSummary\n- b\n", ["a", "b"]),
        ("Tools:\n- a\nUsage:\n- b\n", ["a"]),
        ("Tools:\n- a\nOverview of it\n- b\n", ["a"]),
        ("Tools:\n- a\nsee: this\n- b\nTools:\n- c\n", ["a"]),
        ("```\ntools:\n- a\n```\n", ["a"]),
    ],
)
def test_tools_grammar_matches_the_reference(body: str, tools: list[str]) -> None:
    parsed = parse_skill_text("---\nname: x\n---\n" + body, PATH)
    assert (parsed.tools_section.names if parsed.tools_section else []) == tools


def test_tools_lines_and_after_break() -> None:
    text = "---\nname: x\n---\nTools:\n- a\n\n## Usage\n- step one\n"
    section = parse_skill_text(text, PATH).tools_section
    assert section.line == 4
    assert [(t.name, t.line, t.after_break) for t in section.tools] == [
        ("a", 5, False),
        ("step one", 8, True),
    ]


def test_tools_section_without_front_matter_is_still_read() -> None:
    assert parse_skill_text("Tools:\n- a\n", PATH).tools_section.names == ["a"]


def test_load_reads_a_folder(tmp_path: Path) -> None:
    directory = write_skill(
        tmp_path,
        "x",
        front="name: ' x '\ndescription: '  Does.  '\n",
        body="Use __BASE_DIR__/scripts/run.sh\nTools:\n- t\n",
        files={
            "docs/guide.md": "g",
            "notes.TXT": "n",
            "scripts/run.sh": "echo",
            "data.json": "{}",
            ".hidden/x.md": "h",
            "nested/SKILL.md": "---\nname: nested\n---\n",
            "nested/inner.md": "i",
        },
    )
    skill = Skill.load(directory)
    assert (skill.name, skill.description, skill.tools) == ("x", "Does.", ["t"])
    assert skill.docs == ("docs/guide.md", "notes.TXT")
    assert skill.scripts == ("scripts/run.sh",)
    assert skill.read_text("docs/guide.md") == "g"
    assert skill.substitute_base_dir(skill.body) == (
        f"Use {directory.resolve()}/scripts/run.sh\nTools:\n- t\n"
    )


def test_name_falls_back_to_the_folder(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "folder-name", front="description: D.\n")
    assert Skill.load(directory).name == "folder-name"


def test_symlinks_leaving_the_skill_are_not_docs(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    directory = write_skill(tmp_path, "x", files={"inside.md": "i"})
    os.symlink(secret, directory / "leak.txt")
    os.symlink(directory / "inside.md", directory / "alias.md")
    assert Skill.load(directory).docs == ("alias.md", "inside.md")


def test_non_utf8_skill_md_is_a_finding_with_its_line(tmp_path: Path) -> None:
    directory = tmp_path / "x"
    directory.mkdir()
    (directory / "SKILL.md").write_bytes(b"---\nname: x\ndescription: caf\xe9\n---\n")
    skill = Skill.load(directory)
    assert [(p.rule, p.line) for p in skill.problems] == [("skill-md-encoding", 3)]
    assert skill.description == "caf\ufffd"
    with pytest.raises(SkillParseError, match=r"SKILL.md:3: \[skill-md-encoding\] SKILL.md is not"):
        skill.require_parsed()


def test_a_folder_without_skill_md_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(SkillNotFoundError) as excinfo:
        Skill.load(tmp_path)
    assert str(excinfo.value) == (
        f"{tmp_path}: no SKILL.md in this folder (a skill is a folder holding SKILL.md)"
    )


def test_many_skills_load_as_each_alone_in_order(tmp_path: Path) -> None:
    first = write_skill(tmp_path, "first")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_bytes(b"---\nname: broken\ndescription: caf\xe9\n---\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(tmp_path / "first" / "SKILL.md", linked / "SKILL.md")  # a link: not read
    folders = [first, str(broken), linked]
    many = Skill.load_all(folders)
    alone = [Skill.load(folder) for folder in folders]
    assert [skill.directory for skill in many] == [first, broken, linked]
    assert [(skill.fields, skill.problems) for skill in many] == [
        (skill.fields, skill.problems) for skill in alone
    ]
    assert [[p.rule for p in skill.problems] for skill in many] == [
        [], ["skill-md-encoding"], ["skill-md-unreadable"],
    ]
    assert many[0].listings is many[1].listings  # one run's listings
    with pytest.raises(SkillNotFoundError):
        Skill.load_all([first, tmp_path])


@pytest.mark.parametrize(
    "front",
    [
        "a: &x {b: c}\nd: *x\n",
        "<<: {a: b}\nc: d\n",
        "a: &x [1, *x]\n",
        "a: &x\n  b: *x\n",
        "a: 1\nb: {c: 1, c: 2}\n",
        "a: !!str 1\nb: !!binary aGk=\nc: 2024-01-02\nd: .nan\n",
        "meta:\n  - {x: [y, {z: w}]}\n",
    ],
)
def test_front_matter_data_equals_plain_pyyaml(front: str) -> None:
    """The one-pass construction (strings and string-keyed maps built directly, the rest by
    PyYAML, recursive aliases by PyYAML's two-step construction) gives PyYAML's data."""
    expected = yaml.load(front, Loader=yaml.CSafeLoader)
    values = parse_skill_text(f"---\n{front}---\n", PATH).front_matter.values
    assert repr(values) == repr(expected)


def test_front_matter_pyyaml_cannot_construct_is_a_yaml_problem() -> None:
    # PyYAML deletes the merge key from the node before it raises; a retry must not see that.
    parsed = parse_skill_text("---\n<<: \nname: x\n---\n", PATH)
    assert parsed.front_matter is None
    assert [(p.rule, p.line) for p in parsed.problems] == [("frontmatter-yaml", 2)]


def test_repository_from_skills_indexes_them_first_one_wins(tmp_path: Path) -> None:
    from pytest_agent_skills.repository import DuplicateSkill, SkillRepository
    from pytest_agent_skills.skill import Skill

    first = write_skill(tmp_path / "a")
    second = write_skill(tmp_path / "b")
    other = write_skill(tmp_path / "a", name="other")
    repository = SkillRepository.from_skills(Skill.load(d) for d in (first, second, other))
    assert repository.roots == []
    assert repository.names() == ["csv-summary", "other"]
    assert repository.get("csv-summary").directory == first
    assert repository.duplicates == [DuplicateSkill("csv-summary", first, second)]


def test_a_symlink_loop_in_the_skill_folder_is_not_a_doc(tmp_path: Path) -> None:
    from pytest_agent_skills.skill import Skill

    directory = write_skill(tmp_path, files={"guide.md": "read me\n"})
    (directory / "b.md").symlink_to("a.md")
    (directory / "a.md").symlink_to("b.md")
    assert Skill.load(directory).docs == ("guide.md",)


@pytest.mark.parametrize(
    "text",
    [
        "---\nname: a\ndescription: é\n---\nbody ✓\nmore\n",
        "---\nname: a\ndescription: é\n---\nbody ✓\nno end",
        "---\r\nname: a\r\ndescription: é\r\n---\r\nbody ✓\r\n",
        "---\rname: a\rdescription: é\r---\rbody\rmore",
        "\ufeff---\nname: a\ndescription: b\n---\n\n\n",
    ],
    ids=["lf", "no-last-end", "crlf", "lone-cr", "bom"],
)
def test_a_loaded_skill_counts_the_lines_its_text_has(tmp_path: Path, text: str) -> None:
    # Loading counts the line ends in the bytes read; the text alone must give the same.
    (tmp_path / "SKILL.md").write_bytes(text.encode("utf-8"))
    loaded = Skill.load(tmp_path).parsed
    from_text = parse_skill_text(text, tmp_path / "SKILL.md")
    assert loaded.line_count == from_text.line_count == len(text.lstrip("\ufeff").splitlines())
    assert (loaded.body, loaded.body_line) == (from_text.body, from_text.body_line)
