"""Per-skill exemptions: ignore comments in SKILL.md and per-path ignores, through the
library, the agent-skills command and pytest; suppressed findings stay visible in reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agent_skills.errors import ConfigurationError
from pytest_agent_skills.rules import (
    ValidationOptions,
    parse_per_path_ignores,
    validate,
    validate_paths,
)
from pytest_agent_skills.skill import Skill
from tests.support.cli import cli, named_document
from tests.support.pytester_runs import run
from tests.support.skill_files import write_skill

pytest_plugins = ["pytester"]

#: Folder 'legacy-pdf' whose name says 'pdf': name-directory (line 2) and a missing script.
LEGACY_FRONT = "name: pdf\ndescription: Fills PDF forms. Use when the user has a PDF form.\n"


def legacy(root: Path, body: str) -> Path:
    return write_skill(root, "legacy-pdf", front=LEGACY_FRONT, body=body)


def rules(directory: Path, options: ValidationOptions | None = None) -> list[tuple[str, int]]:
    found = validate(Skill.load(directory), options or ValidationOptions())
    return [(finding.rule, finding.line or 0) for finding in found]


def test_an_ignore_comment_covers_the_whole_file(tmp_path: Path) -> None:
    body = (
        "<!-- agent-skills: ignore name-directory, reference-missing -->\n"
        "Run `python scripts/fill.py`.\n"
        "Then `python scripts/check.py`.\n"
    )
    directory = legacy(tmp_path, body)
    assert rules(directory) == []
    (report,) = validate_paths([directory])
    assert report.ok
    assert [(s.finding.rule, s.finding.line, s.by, s.line) for s in report.suppressed] == [
        ("name-directory", 2, "comment", 5),
        ("reference-missing", 6, "comment", 5),
        ("reference-missing", 7, "comment", 5),
    ]


def test_an_ignore_next_line_comment_covers_only_the_next_line(tmp_path: Path) -> None:
    body = (
        "<!-- agent-skills: ignore-next-line reference-missing -->\n"
        "Run `python scripts/fill.py`.\n"
        "Then `python scripts/check.py`.\n"
    )
    assert rules(legacy(tmp_path, body)) == [("name-directory", 2), ("reference-missing", 7)]


def test_a_comment_shown_as_an_example_is_not_a_directive(tmp_path: Path) -> None:
    body = (
        "Silence a rule like this:\n\n"
        "```markdown\n"
        "<!-- agent-skills: ignore name-directory -->\n"
        "```\n"
    )
    assert rules(legacy(tmp_path, body)) == [("name-directory", 2)]


@pytest.mark.parametrize(
    ("comment", "message"),
    [
        (
            "<!-- agent-skills: ignore name-directry -->",
            "unknown rule id 'name-directry' in the agent-skills comment (did you mean"
            " 'name-directory'?); 'agent-skills rules' lists every rule id.",
        ),
        (
            "<!-- agent-skills: disable name-directory -->",
            "unknown agent-skills action 'disable': write '<!-- agent-skills: ignore RULE -->'"
            " (the whole file) or '<!-- agent-skills: ignore-next-line RULE -->' (the next line).",
        ),
        (
            "<!-- agent-skills: ignore -->",
            "the agent-skills comment names no rule to ignore: list the rule ids, e.g."
            " '<!-- agent-skills: ignore body-too-long -->'.",
        ),
    ],
)
def test_a_bad_comment_is_an_error_at_its_line(tmp_path: Path, comment: str, message: str) -> None:
    directory = legacy(tmp_path, f"# Title\n\n{comment}\n")
    found = validate(Skill.load(directory))
    bad = [f for f in found if f.rule == "ignore-comment-invalid"]
    assert [(f.line, f.message, f.is_error) for f in bad] == [(7, message, True)]


def test_a_comment_cannot_silence_the_check_of_comments(tmp_path: Path) -> None:
    body = "<!-- agent-skills: ignore ignore-comment-invalid, nope -->\n"
    assert ("ignore-comment-invalid", 5) in rules(legacy(tmp_path, body))


def test_per_path_ignores_match_folders_skill_files_and_folder_names(tmp_path: Path) -> None:
    body = "Run `python scripts/fill.py`.\n"
    directory = legacy(tmp_path / "skills", body)
    cases = {
        "skills/legacy-*:name-directory,reference-missing": [],
        "skills/legacy-pdf/SKILL.md: reference-missing": [("name-directory", 2)],
        "legacy-*:name-directory": [("reference-missing", 5)],
        "skills/other/*:name-directory": [("name-directory", 2), ("reference-missing", 5)],
        f"{tmp_path}/skills/*: name-directory": [("reference-missing", 5)],
    }
    for entry, expected in cases.items():
        ignores = parse_per_path_ignores([entry], tmp_path, "test")
        options = ValidationOptions.build(per_path_ignores=ignores)
        assert rules(directory, options) == expected, entry


def test_per_path_ignore_entries_in_every_layout() -> None:
    ignores = parse_per_path_ignores(
        ["a/*: body-too-long, body-tokens", "b/*:name-directory c: reference-missing"], "/r", "x"
    )
    assert [(i.pattern, sorted(i.rules)) for i in ignores] == [
        ("a/*", ["body-tokens", "body-too-long"]),
        ("b/*", ["name-directory"]),
        ("c", ["reference-missing"]),
    ]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            ["skills/*: body-to-long"],
            "pytest.ini: unknown rule id 'body-to-long' for 'skills/*' (did you mean"
            " 'body-too-long'?) ('agent-skills rules' lists every rule id)",
        ),
        (
            ["body-too-long"],
            "pytest.ini: 'body-too-long' is not GLOB:RULE[,RULE...] (e.g."
            " 'skills/legacy/*:body-too-long')",
        ),
        (["skills/*:"], "pytest.ini: 'skills/*:' names no rule; write GLOB:RULE[,RULE...]"),
        (
            [":body-too-long"],
            "pytest.ini: ':body-too-long' has no path before ':'; write GLOB:RULE[,RULE...]",
        ),
    ],
)
def test_bad_per_path_ignores_are_configuration_errors(entries: list[str], message: str) -> None:
    with pytest.raises(ConfigurationError) as excinfo:
        parse_per_path_ignores(entries, "/r", "pytest.ini")
    assert str(excinfo.value) == message


@pytest.fixture
def skills_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLS_PER_PATH_IGNORES", raising=False)
    legacy(tmp_path / "skills", "<!-- agent-skills: ignore name-directory -->\nRun scripts/a.py.\n")
    return tmp_path


def test_the_command_reports_suppressed_findings(
    skills_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("validate", "skills", "--per-path-ignore", "skills/legacy-*:reference-missing")
    status, out, _ = cli(capsys, *args)
    assert status == 0
    assert out == "1 skill(s) checked: 0 error(s), 0 warning(s), 2 suppressed; 0 skill(s) failed\n"
    status, out, _ = cli(capsys, *args, "--format", "json")
    document = named_document(out, "validate")
    assert document["summary"] == {"skills": 1, "errors": 0, "warnings": 0, "suppressed": 2}
    assert document["skills"][0]["suppressed"] == [
        {
            "rule": "name-directory",
            "severity": "error",
            "message": "name 'pdf' must equal the skill's folder name 'legacy-pdf'. Rename the"
            " folder or set 'name: legacy-pdf'.",
            "line": 2,
            "suppressed_by": {"kind": "comment", "line": 5},
        },
        {
            "rule": "reference-missing",
            "severity": "error",
            "message": "the body refers to 'scripts/a.py', which does not exist in the skill"
            " folder. Add the file, or fix the path (paths are relative to the folder holding"
            " SKILL.md).",
            "line": 6,
            "suppressed_by": {"kind": "per-path-ignore", "pattern": "skills/legacy-*"},
        },
    ]
    status, out, _ = cli(capsys, *args, "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert [(r["ruleId"], r["suppressions"]) for r in results] == [
        (
            "name-directory",
            [{"kind": "inSource", "justification": "agent-skills comment on line 5"}],
        ),
        (
            "reference-missing",
            [{"kind": "external", "justification": "per-path ignore 'skills/legacy-*'"}],
        ),
    ]


def test_the_command_reads_the_environment_when_no_flag_is_given(
    skills_tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLS_PER_PATH_IGNORES", "legacy-pdf:reference-missing")
    assert cli(capsys, "validate", "skills")[0] == 0
    # The command line wins over the environment.
    assert cli(capsys, "validate", "skills", "--per-path-ignore", "x:body-empty")[0] == 1
    monkeypatch.setenv("SKILLS_PER_PATH_IGNORES", "legacy-pdf:reference-mising")
    status, _, err = cli(capsys, "validate", "skills")
    assert status == 2
    assert err.endswith(
        "agent-skills validate: error: environment variable SKILLS_PER_PATH_IGNORES: unknown"
        " rule id 'reference-mising' for 'legacy-pdf' (did you mean 'reference-missing'?)"
        " ('agent-skills rules' lists every rule id)\n"
    )


def test_a_folder_with_a_space_is_matched_by_a_glob_with_a_question_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    body = "<!-- agent-skills: ignore name-directory -->\nRun scripts/a.py.\n"
    legacy(tmp_path / "my skills", body)
    monkeypatch.setenv("SKILLS_PER_PATH_IGNORES", "my?skills/legacy-*:reference-missing")
    assert cli(capsys, "validate", "my skills")[0] == 0
    # A space separates entries: "my" is none.
    monkeypatch.setenv("SKILLS_PER_PATH_IGNORES", "my skills/legacy-*:reference-missing")
    status, _, err = cli(capsys, "validate", "my skills")
    assert status == 2
    assert "environment variable SKILLS_PER_PATH_IGNORES: 'my' is not GLOB:RULE" in err


def test_pytest_per_path_ignores_from_ini_flag_and_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLS_PER_PATH_IGNORES", raising=False)
    legacy(pytester.path / "skills", "Run scripts/a.py.\n")
    # The per-check view: which checks fail tells which ignores held.
    quiet = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-o", "skills_items=check")
    pytester.runpytest(*quiet).assert_outcomes(passed=5, failed=2)
    pytester.makeini(
        "[pytest]\nskills_per_path_ignores =\n    skills/legacy-*: name-directory\n"
        "    legacy-pdf: reference-missing\n"
    )
    pytester.runpytest(*quiet).assert_outcomes(passed=7)
    # command line > environment > configuration file
    monkeypatch.setenv("SKILLS_PER_PATH_IGNORES", "legacy-pdf:body-empty")
    pytester.runpytest(*quiet).assert_outcomes(passed=5, failed=2)
    flag = ("--skills-per-path-ignore", "legacy-pdf:name-directory")
    pytester.runpytest(*quiet, *flag).assert_outcomes(passed=6, failed=1)
    monkeypatch.delenv("SKILLS_PER_PATH_IGNORES")
    pytester.makeini("[pytest]\nskills_per_path_ignores = skills/*: name-dir\n")
    result = pytester.runpytest(*quiet)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: {pytester.path / 'tox.ini'}: skills_per_path_ignores: unknown rule id"
            " 'name-dir' for 'skills/[*]' (did you mean 'name-directory'?) ('agent-skills"
            " rules' lists every rule id)"
        ]
    )


def test_the_command_reads_per_path_ignores_from_the_configuration_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As pytest does: from the file found from the paths given, its globs relative to it."""
    monkeypatch.delenv("SKILLS_PER_PATH_IGNORES", raising=False)
    repo = tmp_path / "repo"
    legacy(repo / "skills", "Run scripts/a.py.\n")
    (repo / "pytest.ini").write_text(
        "[pytest]\nskills_per_path_ignores =\n    skills/legacy-*: name-directory\n"
        "    legacy-pdf: reference-missing\n"
    )
    monkeypatch.chdir(tmp_path)
    status, out, _ = cli(capsys, "validate", "repo/skills", "--format", "json")
    assert status == 0
    (skill,) = json.loads(out)["skills"]
    assert [(s["rule"], s["suppressed_by"]) for s in skill["suppressed"]] == [
        ("name-directory", {"kind": "per-path-ignore", "pattern": "skills/legacy-*"}),
        ("reference-missing", {"kind": "per-path-ignore", "pattern": "legacy-pdf"}),
    ]
    # The command line replaces the file's entries.
    status, out, _ = cli(capsys, "validate", "repo/skills", "--per-path-ignore", "x:body-empty")
    assert status == 1
    assert "[name-directory]" in out and "[reference-missing]" in out


def test_pytest_honours_ignore_comments_without_failure_or_warning(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLS_PER_PATH_IGNORES", raising=False)
    comment = "<!-- agent-skills: ignore-next-line reference-missing -->\n"
    legacy(
        pytester.path / "skills",
        "<!-- agent-skills: ignore name-directory -->\n" + comment + "Run scripts/a.py.\n",
    )
    # Other plugins' own warnings are not this test's business (pytest-benchmark warns when the
    # outer run is an xdist worker).
    result = run(pytester, "-W", "error")
    result.assert_outcomes(passed=1, warnings=0)
