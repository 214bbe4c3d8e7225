"""Each validation rule over real skill folders: ids, lines and the exact messages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_agent_skills.errors import ConfigurationError
from pytest_agent_skills.findings import Severity
from pytest_agent_skills.rules import (
    CHECKS,
    FRONT_MATTER_CHECKS,
    RULES,
    ValidationOptions,
    validate,
    validate_check,
    validate_paths,
)
from pytest_agent_skills.skill import Skill
from tests.support.skill_files import write_skill


def findings_of(
    directory: Path, options: ValidationOptions | None = None
) -> list[tuple[str, int | None]]:
    skill = Skill.load(directory)
    return [(f.rule, f.line) for f in validate(skill, options or ValidationOptions())]


def messages(directory: Path, rule: str, options: ValidationOptions | None = None) -> list[str]:
    return [
        f.message
        for f in validate(Skill.load(directory), options or ValidationOptions())
        if f.rule == rule
    ]


def test_a_valid_skill_has_no_findings(tmp_path: Path) -> None:
    assert findings_of(write_skill(tmp_path)) == []


@pytest.mark.parametrize(
    ("name", "rules"),
    [
        ("Bad_Name", ["name-charset"]),
        ("-lead", ["name-hyphens"]),
        ("trail-", ["name-hyphens"]),
        ("double--hyphen", ["name-hyphens"]),
        ("café", ["name-charset"]),
        ("a" * 65, ["name-length"]),
        ("claude-helper", ["name-reserved-word"]),
        ("my-anthropic-tool", ["name-reserved-word"]),
    ],
)
def test_name_format_rules(tmp_path: Path, name: str, rules: list[str]) -> None:
    directory = write_skill(tmp_path, name)
    assert [rule for rule, line in findings_of(directory)] == rules
    assert all(line == 2 for _rule, line in findings_of(directory))


def test_name_charset_message_names_the_characters_and_a_fix(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "Bad_Name")
    assert messages(directory, "name-charset") == [
        "name 'Bad_Name' may only contain lowercase letters a-z, digits 0-9 and hyphens;"
        " found 'B_N'. Use e.g. 'bad-name'."
    ]


def test_name_must_equal_the_folder(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "folder", front="name: other\ndescription: Does things.\n")
    assert messages(directory, "name-directory") == [
        "name 'other' must equal the skill's folder name 'folder'. Rename the folder or set"
        " 'name: folder'."
    ]


def test_folder_name_is_resolved_before_comparing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """skills-ref compares against Path('.').name == '' when run as `validate .`; we resolve."""
    directory = write_skill(tmp_path, "csv-summary")
    monkeypatch.chdir(directory)
    assert findings_of(Path(".")) == []
    assert findings_of(Path("../csv-summary/.")) == []


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("description: Does things.\n", [("name-missing", 1)]),
        ("name: 12\ndescription: Does things.\n", [("name-type", 2)]),
        ("name: ''\ndescription: Does things.\n", [("name-missing", 2)]),
        ("name: x\n", [("description-missing", 1)]),
        ("name: x\ndescription: '   '\n", [("description-missing", 3)]),
        ("name: x\ndescription: [a, b]\n", [("description-type", 3)]),
        ("name: x\ndescription: yes\n", [("description-type", 3)]),  # the model sees True
        ("name: x\ndescription: " + "d" * 1025 + "\n", [("description-length", 3)]),
        ("name: x\ndescription: Use <b>bold</b> text.\n", [("description-xml", 3)]),
    ],
)
def test_name_and_description_presence_and_types(
    tmp_path: Path, front: str, expected: list[tuple[str, int]]
) -> None:
    # Line 1 is '---', so the first field is on line 2; a missing field points at line 1.
    assert findings_of(write_skill(tmp_path, "x", front=front)) == expected


def test_description_length_limit_is_inclusive(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: " + "d" * 1024 + "\n")
    assert findings_of(directory) == []


@pytest.mark.parametrize(
    ("field_text", "rule"),
    [
        ("license: 3\n", "license-type"),
        ("license:\n", "license-type"),
        ("compatibility: [py]\n", "compatibility-type"),
        ("compatibility: ''\n", "compatibility-length"),
        ("compatibility: " + "c" * 501 + "\n", "compatibility-length"),
        ("metadata: just text\n", "metadata-type"),
        ("metadata:\n  owner:\n    team: x\n", "metadata-type"),
        ("metadata:\n  tags: [a, b]\n", "metadata-type"),
        ("metadata:\n  version: 1.50\n", "metadata-value-scalar"),
        ("allowed-tools:\n  - Read\n  - Bash\n", "allowed-tools-type"),
        ("version: 1\n", "field-unknown"),
        ("argument-hint: '[file]'\n", "field-unknown"),
    ],
)
def test_optional_field_rules(tmp_path: Path, field_text: str, rule: str) -> None:
    directory = write_skill(
        tmp_path, "x", front="name: x\ndescription: Does things.\n" + field_text
    )
    assert findings_of(directory) == [(rule, 4)]


@pytest.mark.parametrize(
    ("field_text", "found"),
    [
        ("license: 2024-01-02\n", "a date (2024-01-02)"),
        ("license: 2024-01-02 10:00:00\n", "a date (2024-01-02 10:00:00)"),
        ("license: 1.5\n", "a number 1.5"),
        ("license: no\n", "a boolean (false)"),
        ("license:\n", "an empty value"),
    ],
)
def test_a_value_of_another_type_is_named_with_its_type(
    tmp_path: Path, field_text: str, found: str
) -> None:
    directory = write_skill(
        tmp_path, "x", front="name: x\ndescription: Does things.\n" + field_text
    )
    (message,) = messages(directory, "license-type")
    assert f"found {found}." in message


def test_optional_fields_that_follow_the_spec_pass(tmp_path: Path) -> None:
    front = (
        "name: x\ndescription: Does things.\nlicense: Apache-2.0\ncompatibility: Needs git\n"
        "metadata:\n  author: me\n  version: '1.0'\nallowed-tools: Bash(git:*) Read\n"
    )
    assert findings_of(write_skill(tmp_path, "x", front=front)) == []


def test_unknown_field_messages_say_where_to_move_it(tmp_path: Path) -> None:
    front = "name: x\ndescription: Does things.\nversion: 1\nwhen_to_use: always\n"
    directory = write_skill(tmp_path, "x", front=front)
    assert messages(directory, "field-unknown") == [
        "unknown top-level field 'version': the spec profile allows only allowed-tools,"
        " compatibility, description, license, metadata, name; move it under 'metadata:'"
        ' (e.g. metadata: {version: "..."}) or remove it.',
        "unknown top-level field 'when_to_use': the spec profile allows only allowed-tools,"
        " compatibility, description, license, metadata, name; it is a Claude Code extension"
        " field: validate with the claude-code profile (--skills-profile claude-code) or"
        " remove it.",
    ]


def test_claude_code_profile_accepts_its_fields_and_list_allowed_tools(tmp_path: Path) -> None:
    front = (
        "description: Does things.\nwhen_to_use: always\ndisable-model-invocation: true\n"
        "allowed-tools:\n  - Read\n"
    )
    directory = write_skill(tmp_path, "x", front=front)
    options = ValidationOptions.build(profile="claude-code")
    findings = validate(Skill.load(directory), options)
    assert [(f.rule, f.severity) for f in findings] == [("name-missing", Severity.WARNING)]
    assert [rule for rule, _ in findings_of(directory)] == [
        "field-unknown",
        "field-unknown",
        "allowed-tools-type",
        "name-missing",
    ]


def test_allow_unknown_fields_turns_the_error_into_a_warning(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: Does things.\nauthor: me\n")
    findings = validate(Skill.load(directory), ValidationOptions.build(allow_unknown_fields=True))
    assert [(f.rule, f.severity) for f in findings] == [("field-unknown", Severity.WARNING)]


def test_severity_overrides_change_or_silence_a_rule(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "claude-x")
    promoted = ValidationOptions.build(severities=["name-reserved-word=error"])
    assert [f.severity for f in validate(Skill.load(directory), promoted)] == [Severity.ERROR]
    silenced = ValidationOptions.build(severities={"name-reserved-word": "off"})
    assert validate(Skill.load(directory), silenced) == []


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (
            ["nope=off"],
            "rule severity: unknown rule id 'nope' ('agent-skills rules' lists every rule id)",
        ),
        (
            ["body-empty=loud"],
            "rule severity: invalid level 'loud' for body-empty (choose from error, warning, off)",
        ),
        (
            ["body-empty"],
            "rule severity 'body-empty' is not RULE=LEVEL (e.g. body-too-long=off;"
            " levels: error, warning, off)",
        ),
    ],
)
def test_bad_severity_overrides_are_configuration_errors(items: list[str], message: str) -> None:
    with pytest.raises(ConfigurationError) as excinfo:
        ValidationOptions.build(severities=items)
    assert str(excinfo.value) == message


def test_unknown_profile_lists_the_choices() -> None:
    with pytest.raises(
        ConfigurationError,
        match=r"unknown validation profile 'x' \(choose from spec, claude-code, trpc\)",
    ):
        ValidationOptions.build(profile="x")


def test_body_guidance_warnings(tmp_path: Path) -> None:
    assert findings_of(write_skill(tmp_path, "x", front="name: x\ndescription: D.\n", body="")) == [
        ("body-empty", 5)
    ]
    long_body = "line\n" * 501
    assert findings_of(
        write_skill(tmp_path, "y", front="name: y\ndescription: D.\n", body=long_body)
    ) == [("body-too-long", 505)]
    big_body = ("word " * 20) + "\n"
    big = write_skill(tmp_path, "z", front="name: z\ndescription: D.\n", body=big_body * 250)
    assert findings_of(big) == [("body-tokens", 5)]


def test_500_body_lines_is_still_fine(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: D.\n", body="line\n" * 500)
    assert findings_of(directory) == []


TOOLS_BODY = """Intro.

Tools: get_weather
- get_weather
- get_weather
- a  # note
- fetch: the thing
- `quoted`

## Usage
- step one
- second_step
"""


TRPC = ValidationOptions.build(profile="trpc")


def test_tools_section_lints(tmp_path: Path) -> None:
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: D.\n", body=TOOLS_BODY)
    assert findings_of(directory, TRPC) == [
        ("tools-header-text", 7),
        ("tools-duplicate", 9),
        ("tools-not-identifier", 10),
        ("tools-not-identifier", 11),
        ("tools-not-identifier", 12),
        ("tools-not-identifier", 15),
        ("tools-after-break", 16),
    ]
    assert messages(directory, "tools-not-identifier", TRPC) == [
        "the reference declares a tool literally named 'a  # note', which is not a tool name: the"
        " reference keeps an inline '# comment' in the name: put the comment on its own line.",
        "the reference declares a tool literally named 'fetch: the thing', which is not a tool"
        " name: remove the text after ':' (describe the tool in prose outside the section).",
        "the reference declares a tool literally named '`quoted`', which is not a tool name:"
        " remove the Markdown formatting (backticks, asterisks) around the name.",
        "the reference declares a tool literally named 'step one', which is not a tool name: this"
        " bullet comes after a heading or prose line, so the reference still reads it as a tool:"
        " end the section with a line containing ':' (e.g. 'Usage:') before it.",
    ]


def test_tools_section_ended_by_a_colon_line_keeps_usage_bullets_out(tmp_path: Path) -> None:
    body = "Tools:\n- get_weather\n\nUsage:\n- step one\n"
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: D.\n", body=body)
    assert findings_of(directory, TRPC) == []


def test_empty_tools_section_warns(tmp_path: Path) -> None:
    directory = write_skill(
        tmp_path, "x", front="name: x\ndescription: D.\n", body="Tools:\n\n# - old\n"
    )
    assert findings_of(directory, TRPC) == [("tools-empty", 5)]


def test_unknown_tools_only_when_available_tools_are_configured(tmp_path: Path) -> None:
    body = "Tools:\n- get_weather\n- get_forecast\n"
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: D.\n", body=body)
    assert findings_of(directory, TRPC) == []
    options = ValidationOptions.build(profile="trpc", available_tools=["get_weather"])
    assert messages(directory, "tools-unknown", options) == [
        "tool 'get_forecast' is not among the available tools (get_weather). Fix the spelling,"
        " or add the tool to skills_available_tools."
    ]


def test_missing_and_outside_references(tmp_path: Path) -> None:
    body = (
        "Read [the guide](docs/guide.md) and [missing](docs/missing.md#part).\n"
        "Run `python scripts/run.py` then `python scripts/absent.py`.\n"
        "See [site](https://example.org/x.md), [anchor](#top) and [up](../other/x.md).\n"
        "Templates: __BASE_DIR__/assets/template.txt\n"
    )
    directory = write_skill(
        tmp_path,
        "x",
        front="name: x\ndescription: D.\n",
        body=body,
        files={
            "docs/guide.md": "guide\n",
            "scripts/run.py": "print()\n",
            "assets/template.txt": "t",
        },
    )
    assert findings_of(directory) == [
        ("reference-missing", 5),
        ("reference-missing", 6),
        ("reference-outside", 7),
    ]
    assert messages(directory, "reference-missing")[0] == (
        "the body refers to 'docs/missing.md', which does not exist in the skill folder. Add the"
        " file, or fix the path (paths are relative to the folder holding SKILL.md)."
    )


def test_bare_paths_outside_skill_folders_are_not_references(tmp_path: Path) -> None:
    body = "Edit src/app/main.py in the user's project, or see e.g. and i.e. notes.\n"
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: D.\n", body=body)
    assert findings_of(directory) == []


def test_references_more_than_one_level_deep_warn(tmp_path: Path) -> None:
    files = {
        "references/a.md": "See [b](b.md).\n",
        "references/b.md": "B\n",
        "references/c.md": "See [a](a.md).\n",
    }
    body = "Read [a](references/a.md) and [c](references/c.md).\n"
    directory = write_skill(
        tmp_path, "x", front="name: x\ndescription: D.\n", body=body, files=files
    )
    # c.md links a.md, which SKILL.md links itself: one level deep, fine; a.md -> b.md is not.
    assert findings_of(directory) == [("reference-nested", 5)]


def test_docs_are_read_only_when_one_may_link_a_file_skill_md_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agent_skills.rules import _references

    read: list[str] = []
    reader = _references.read_skill_file

    def counted(directory: str, relative: str) -> bytes:
        read.append(relative)
        return reader(directory, relative)

    monkeypatch.setattr(_references, "read_skill_file", counted)
    files = {"references/a.md": "See [b](b.md).\n", "references/b.md": "B\n"}
    body = "Read [a](references/a.md) and [b](references/b.md).\n"
    front = "name: x\ndescription: D.\n"
    directory = write_skill(tmp_path, "x", front=front, body=body, files=files)
    assert findings_of(directory) == []
    assert read == []  # SKILL.md names every Markdown file: no doc can link another one
    (directory / "references" / "c.md").write_text("C\n")
    assert findings_of(directory) == []
    assert read == ["references/a.md", "references/b.md"]


def test_a_doc_linking_a_symbolic_link_to_a_doc_is_nested(tmp_path: Path) -> None:
    """A link to a doc of the skill is another path for the rule (SKILL.md does not name it):
    listed as a link, the doc linking it is read and its link reported."""
    files = {"references/a.md": "See [b](alias.md).\n", "references/b.md": "B\n"}
    body = "Read [a](references/a.md) and [b](references/b.md).\n"
    front = "name: x\ndescription: D.\n"
    directory = write_skill(tmp_path, "x", front=front, body=body, files=files)
    (directory / "references" / "alias.md").symlink_to("b.md")
    assert messages(directory, "reference-nested") == [
        "'references/a.md' refers on to 'references/alias.md', which SKILL.md does not link;"
        " keep references one level deep: link it from SKILL.md too."
    ]


def test_parse_problems_come_first_and_suppress_field_rules(tmp_path: Path) -> None:
    directory = tmp_path / "x"
    directory.mkdir()
    (directory / "SKILL.md").write_text("---\nname: x\nname: y\ndescription: [unclosed\n---\n")
    assert findings_of(directory) == [("frontmatter-yaml", 5)]


def test_front_matter_checks_are_exactly_those_silent_without_front_matter(tmp_path: Path) -> None:
    # The collection skips FRONT_MATTER_CHECKS when the front matter did not parse; the
    # other checks still read the body (here a missing reference and an empty Tools: section).
    directory = tmp_path / "x"
    directory.mkdir()
    (directory / "SKILL.md").write_text("no front matter\n\nRun scripts/run.py\n\nTools:\n")
    skill = Skill.load(directory)
    silent = {check for check in CHECKS if not validate_check(skill, check, TRPC)}
    assert silent == FRONT_MATTER_CHECKS


def test_duplicate_names_across_roots_first_root_wins(tmp_path: Path) -> None:
    first = write_skill(tmp_path / "one", "dup")
    second = write_skill(tmp_path / "two", "dup")
    reports = validate_paths([tmp_path / "one", tmp_path / "two"])
    assert [report.ok for report in reports] == [True, False]
    (finding,) = reports[1].findings
    assert finding.rule == "name-duplicate"
    assert finding.message == (
        f"skill 'dup' is also defined in {first / 'SKILL.md'}, which wins (the first one found is"
        " used, roots in the order given); this one is ignored. Rename one."
    )
    assert finding.path == second / "SKILL.md"


def write_flavoured_repository(root: Path) -> None:
    """A repository whose ``skill-flavors/`` (sorted before ``skills/``) holds fragments with a
    SKILL.md but no front matter or no name, beside two real skills declaring one name."""
    fragment = "# PDF, the short flavour\n\nPaste this under the pdf skill's body.\n"
    (root / "skill-flavors" / "pdf").mkdir(parents=True)
    (root / "skill-flavors" / "pdf" / "SKILL.md").write_text(fragment, encoding="utf-8")
    write_skill(root / "skill-flavors", "csv", front="description: The csv flavour.\n")
    write_skill(root / "skills", "csv")
    write_skill(root / "skills", "pdf", front="name: pdf\ndescription: Reads PDFs. Use for PDFs.\n")
    write_skill(root / "vendor", "csv")


def test_a_skill_md_without_a_name_neither_wins_nor_loses_a_name(tmp_path: Path) -> None:
    write_flavoured_repository(tmp_path)
    rules = {
        report.skill.directory.relative_to(tmp_path).as_posix(): [f.rule for f in report.findings]
        for report in validate_paths([tmp_path])
    }
    assert rules == {
        "skill-flavors/csv": ["name-missing"],
        "skill-flavors/pdf": ["frontmatter-missing"],
        "skills/csv": [],
        "skills/pdf": [],
        "vendor/csv": ["name-duplicate"],  # two skills declaring 'csv': the second is blamed
    }


def test_validate_paths_accepts_a_skill_md_a_skill_folder_and_a_root(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    write_skill(tmp_path, "b")
    assert [r.skill.name for r in validate_paths([tmp_path])] == ["a", "b"]
    assert [r.skill.name for r in validate_paths([tmp_path / "a"])] == ["a"]
    assert [r.skill.name for r in validate_paths([tmp_path / "b" / "SKILL.md"])] == ["b"]


def test_every_rule_id_is_kebab_case_with_a_known_severity() -> None:
    for rule in RULES.values():
        assert rule.id == rule.id.lower() and " " not in rule.id and "_" not in rule.id
        assert rule.severity in (Severity.ERROR, Severity.WARNING)


def test_symlinked_skill_folder_compares_the_real_folder_name(tmp_path: Path) -> None:
    real = write_skill(tmp_path, "real-name")
    link = tmp_path / "link-name"
    os.symlink(real, link)
    # The reference stages the resolved folder; the name must match the real folder.
    assert findings_of(link) == []


def test_fences_the_reference_runtime_cannot_read_are_errors(tmp_path: Path) -> None:
    """skill.py reads them (parse warnings); validation fails them: the reference loses the
    front matter of a BOM-prefixed file or one whose fence has trailing spaces."""
    directory = write_skill(tmp_path, "x", front="name: x\ndescription: D.\n")
    skill_file = directory / "SKILL.md"
    skill_file.write_text("\ufeff" + skill_file.read_text(encoding="utf-8"), encoding="utf-8")
    findings = validate(Skill.load(directory))
    assert [(f.rule, f.severity, f.line) for f in findings] == [
        ("frontmatter-bom", Severity.ERROR, 1)
    ]
    skill_file.write_text("---\nname: x\ndescription: D.\n--- \nBody.\n", encoding="utf-8")
    findings = validate(Skill.load(directory))
    assert [(f.rule, f.severity, f.line) for f in findings] == [
        ("frontmatter-fence", Severity.ERROR, 4)
    ]
