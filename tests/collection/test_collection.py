"""pytest collection of SKILL.md files, driven through pytester: the report text is API."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.pytester_runs import QUIET_PLUGINS, run
from tests.support.skill_files import write_linked_docs_skill, write_linked_repository, write_skill

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.usefixtures("clean_settings_env")

#: Items of one skill: one by default; one per check in the per-check view.
ITEMS = 1
CHECK_COUNT = 7
PER_CHECK = ("-o", "skills_items=check")
#: pytest 9's short summary shows the message of a failure reported as text (as the plugin's
#: items report theirs) after its node id; pytest 8.4's shows the node id alone.
MESSAGE_IN_SUMMARY = pytest.version_tuple >= (9,)

@pytest.fixture
def skills(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "skills"
    write_skill(root, "good")
    write_skill(
        root,
        "Bad_Name",
        front="name: Bad_Name\ndescription: x\nversion: 1\n",
        body="Read [guide](docs/guide.md).\n\nTools:\n- a  # note\n",
    )
    write_skill(root, "broken", front="name: [broken\n")
    return root


def test_one_item_per_skill_reports_every_failing_check(
    pytester: pytest.Pytester, skills: Path
) -> None:
    result = run(pytester, "-rfEs", "--skills-profile", "trpc")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ skill Bad_Name _*",
            "skills/Bad_Name/SKILL.md:4: error [[]field-unknown[]] unknown top-level field"
            " 'version': the trpc profile allows only *; move it under 'metadata:'*",
            "skills/Bad_Name/SKILL.md:2: error [[]name-charset[]] name 'Bad_Name' may only contain"
            " lowercase letters a-z, digits 0-9 and hyphens; found 'B_N'. Use e.g. 'bad-name'.",
            "skills/Bad_Name/SKILL.md:9: error [[]tools-not-identifier[]] the reference declares a"
            " tool literally named 'a  # note'*put the comment on its own line.",
            "skills/Bad_Name/SKILL.md:6: error [[]reference-missing[]] the body refers to"
            " 'docs/guide.md', which does not exist in the skill folder.*",
            "*_ skill broken _*",
            "skills/broken/SKILL.md:3: error [[]frontmatter-yaml[]] the front matter is not valid"
            " YAML*",
            "*short test summary info*",
            *(
                f"FAILED skills/{name}/SKILL.md::validate"
                + (f" - skills/{name}/SKILL.md:{line}: error*" if MESSAGE_IN_SUMMARY else "")
                for name, line in (("Bad_Name", 4), ("broken", 3))
            ),
        ]
    )
    # No Python traceback in a skill failure.
    assert "Traceback" not in result.stdout.str()
    assert "def runtest" not in result.stdout.str()


def test_many_failing_skills_each_report_every_failure(pytester: pytest.Pytester) -> None:
    """The terminal's statistics leave out the passed setup and teardown of skill items (so the
    failure summary stays linear): every failure, its findings and every pass still show."""
    for index in range(30):
        if index % 3:
            write_skill(pytester.path / "skills", f"ok-{index:02d}")
        else:
            front = f"name: Bad_{index}\ndescription: D.\nowner: me\n"
            write_skill(pytester.path / "skills", f"bad-{index:02d}", front=front)
    result = run(pytester, "-rA")
    result.assert_outcomes(passed=20, failed=10)
    output = result.stdout.str()
    for index in range(0, 30, 3):
        assert f"_ skill Bad_{index} _" in output
        for rule in ("field-unknown", "name-charset", "name-directory"):
            assert f"skills/bad-{index:02d}/SKILL.md:" in output and f"[{rule}]" in output
    # Under CI (or -vv) pytest's short summary repeats a failure's whole text: count above it.
    failures = output.split("short test summary info")[0]
    assert failures.count("error [field-unknown]") == 10
    assert output.count("\nPASSED skills/ok-") == 20  # -rA: every pass in the short summary


def test_the_per_check_view_has_an_item_per_check(pytester: pytest.Pytester, skills: Path) -> None:
    result = run(pytester, "-rfEs", "--skills-profile", "trpc", *PER_CHECK)
    result.assert_outcomes(passed=12, failed=5, skipped=4)
    result.stdout.fnmatch_lines(
        [
            "*_ skill Bad_Name: fields _*",
            "skills/Bad_Name/SKILL.md:4: error [[]field-unknown[]] unknown top-level field"
            " 'version': the trpc profile allows only *; move it under 'metadata:'*",
            "*_ skill Bad_Name: name _*",
            "skills/Bad_Name/SKILL.md:2: error [[]name-charset[]] name 'Bad_Name' may only contain"
            " lowercase letters a-z, digits 0-9 and hyphens; found 'B_N'. Use e.g. 'bad-name'.",
            "*_ skill Bad_Name: tools _*",
            "skills/Bad_Name/SKILL.md:9: error [[]tools-not-identifier[]] the reference declares a"
            " tool literally named 'a  # note'*put the comment on its own line.",
            "*_ skill Bad_Name: references _*",
            "skills/Bad_Name/SKILL.md:6: error [[]reference-missing[]] the body refers to"
            " 'docs/guide.md', which does not exist in the skill folder.*",
            "*_ skill broken: frontmatter _*",
            "skills/broken/SKILL.md:3: error [[]frontmatter-yaml[]] the front matter is not valid"
            " YAML*",
            "*short test summary info*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]4[]] skills/broken/SKILL.md:1: the front matter did not parse:"
            " see the frontmatter check",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_node_ids_name_the_file_and_the_check(pytester: pytest.Pytester, skills: Path) -> None:
    result = run(pytester, "--collect-only", "-q", "skills/good")
    result.stdout.fnmatch_lines(["skills/good/SKILL.md::validate", "1 test collected*"])
    tree = run(pytester, "--collect-only", "skills/good")
    tree.stdout.fnmatch_lines(["*<SkillFile good>", "*<SkillItem validate>"])
    result = run(pytester, "--collect-only", "-q", "skills/good", *PER_CHECK)
    result.stdout.fnmatch_lines(
        [
            "skills/good/SKILL.md::frontmatter",
            "skills/good/SKILL.md::fields",
            "skills/good/SKILL.md::name",
            "skills/good/SKILL.md::description",
            "skills/good/SKILL.md::body",
            "skills/good/SKILL.md::tools",
            "skills/good/SKILL.md::references",
        ]
    )
    tree = run(pytester, "--collect-only", "skills/good", *PER_CHECK)
    tree.stdout.fnmatch_lines(["*<SkillFile good>", "*<SkillCheckItem frontmatter>"])


def test_the_item_shape_is_a_setting_with_a_flag_and_a_variable(
    pytester: pytest.Pytester, skills: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(pytester, "--skills-items", "check", "skills/good").assert_outcomes(passed=CHECK_COUNT)
    monkeypatch.setenv("SKILLS_ITEMS", "check")
    run(pytester, "skills/good").assert_outcomes(passed=CHECK_COUNT)
    run(pytester, "--skills-items", "skill", "skills/good").assert_outcomes(passed=ITEMS)
    bad = run(pytester, "--skills-items", "rule")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        ["ERROR: command line: invalid choice 'rule' for --skills-items (choose from skill, check)"]
    )


def test_k_selects_by_skill_name(pytester: pytest.Pytester, skills: Path) -> None:
    run(pytester, "-k", "Bad_Name").assert_outcomes(failed=1)
    run(pytester, "-k", "good").assert_outcomes(passed=ITEMS)
    run(pytester, "-k", "Bad_Name and fields", *PER_CHECK).assert_outcomes(failed=1)
    run(pytester, "-k", "good", *PER_CHECK).assert_outcomes(passed=CHECK_COUNT)


def test_warnings_are_reported_with_their_location(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path, "claude-notes")
    result = run(pytester)
    result.assert_outcomes(passed=ITEMS, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "claude-notes/SKILL.md::validate",
            "  */claude-notes/SKILL.md:2: SkillWarning: [[]name-reserved-word[]] name"
            " 'claude-notes' contains the reserved word 'claude'*",
        ]
    )


def test_folders_linked_inside_and_outside_the_skill(pytester: pytest.Pytester) -> None:
    """``docs -> shared/docs`` inside the skill passes every check without a warning; a
    ``docs`` linked to a folder beside the skill is reference-outside, its file never read."""
    write_linked_docs_skill(pytester.path / "skills")
    outside = pytester.path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:SECRET-HASH\n")
    leaving = write_skill(pytester.path / "skills", "leaving", body="See [users](docs/passwd).\n")
    (leaving / "docs").symlink_to("../../outside", target_is_directory=True)

    result = run(pytester, "skills/style-guide")
    result.assert_outcomes(passed=ITEMS)

    result = run(pytester, "skills/leaving")
    result.assert_outcomes(passed=ITEMS, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "  */leaving/SKILL.md:5: SkillWarning: [[]reference-outside[]] the body refers to"
            " 'docs/passwd', reached through a symbolic link to a folder outside the skill"
            " folder; it is not followed (only the skill folder is staged for the agent)."
            " Replace the link with a copy of the folder.",
        ]
    )
    assert "SECRET" not in result.stdout.str()


def test_skill_roots_in_dot_folders(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path / ".claude" / "skills", "hidden-one")
    write_skill(pytester.path / ".agents" / "skills", "hidden-two")
    assert run(pytester).ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result = run(pytester, "--skills-root", ".claude/skills")
    result.assert_outcomes(passed=ITEMS)
    pytester.makeini("[pytest]\nskills_roots =\n    .claude/skills\n    .agents/skills\n")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2 * ITEMS)
    result.stdout.fnmatch_lines(
        [
            "*agent-skills: skills_roots=[[].claude/skills, .agents/skills[]]*",
            ".claude/skills/hidden-one/SKILL.md::validate PASSED*",
            ".agents/skills/hidden-two/SKILL.md::validate PASSED*",
        ]
    )
    result = run(pytester, "-k", "hidden-two")
    result.assert_outcomes(passed=ITEMS)


def test_a_root_collected_twice_is_collected_once(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path / "skills", "once")
    result = run(pytester, "--skills-root", "skills")
    result.assert_outcomes(passed=ITEMS)
    assert "agent-skills: " not in result.stdout.str().replace("agent-skills: skills_roots", "")


def test_missing_root_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--skills-root", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: command line: skill root '*nowhere' does not exist or is not a folder"]
    )


def test_a_missing_root_names_the_file_or_the_variable_it_came_from(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nskills_roots = nowhere\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: {pytester.path / 'tox.ini'}: skills_roots: skill root"
            f" '{pytester.path / 'nowhere'}' does not exist or is not a folder"
        ]
    )
    monkeypatch.setenv("SKILLS_ROOT", "elsewhere")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: environment variable SKILLS_ROOT: skill root"
            f" '{pytester.path / 'elsewhere'}' does not exist or is not a folder"
        ]
    )


def test_duplicate_names_across_roots(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path / "one", "same", front="name: same\ndescription: D.\n")
    write_skill(pytester.path / "two", "same", front="name: same\ndescription: D.\n")
    result = run(pytester, "--skills-root", "one", "--skills-root", "two", "one", "two")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "two/same/SKILL.md:2: error [[]name-duplicate[]] skill 'same' is also defined in"
            " */one/same/SKILL.md, which wins (the first one found is used, roots in the order"
            " given); this one is ignored. Rename one.",
        ]
    )


def test_a_skill_md_without_a_name_owns_no_name(pytester: pytest.Pytester) -> None:
    """Fragments under skill-flavors/ (collected before skills/) have a SKILL.md without front
    matter or without a name: the real skills of those folder names are not duplicates; two
    real skills declaring one name still are."""
    from tests.rules.test_rules import write_flavoured_repository

    write_flavoured_repository(pytester.path)
    result = run(pytester)
    result.stdout.fnmatch_lines(
        [
            "skill-flavors/csv/SKILL.md:1: error [[]name-missing[]] *",
            "skill-flavors/pdf/SKILL.md:1: error [[]frontmatter-missing[]] *",
            "vendor/csv/SKILL.md:2: error [[]name-duplicate[]] skill 'csv' is also defined in"
            " */skills/csv/SKILL.md, which wins*",
        ]
    )
    assert "\nskills/csv/SKILL.md:" not in result.stdout.str()  # no finding on the real skills
    assert "\nskills/pdf/SKILL.md:" not in result.stdout.str()


def test_a_link_loop_is_not_walked_and_each_skill_is_collected_once(
    pytester: pytest.Pytester,
) -> None:
    """``plugins/uipath -> ..`` is not followed (pytest would walk the repository inside itself
    without end), the skills ``plugins/shared`` leads to again are collected once, at their real
    paths, and the skill reached only through ``plugins/pdf`` is collected there."""
    write_linked_repository(pytester.path)
    result = run(pytester, "-v", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1, deselected=2)
    result.stdout.fnmatch_lines(
        [
            "*collected 5 items / 2 deselected / 3 selected",
            "agent-skills: plugins/uipath -> ..: a symbolic link back into a folder it is in,"
            " not followed",
            "agent-skills: 2 skills reached a second way (through plugins/shared -> ../skills):"
            " each collected once (e.g. skills/alpha/SKILL.md, not plugins/shared/alpha/SKILL.md)",
            "plugins/pdf/SKILL.md::validate PASSED*",
            "skills/alpha/SKILL.md::validate PASSED*",
            "skills/broken/SKILL.md::validate FAILED*",
        ]
    )
    output = result.stdout.str()
    assert output.count("agent-skills: plugins/uipath") == 1
    # the failing skill, once (under CI pytest's short summary repeats the whole text: count above)
    assert output.split("short test summary info")[0].count("error [name-charset]") == 1
    assert "uipath/skills" not in output and "name-duplicate" not in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--skills-profile", "strict"],
            "ERROR: command line: invalid choice 'strict' for --skills-profile"
            " (choose from spec, claude-code, trpc)",
        ),
        (
            ["--skills-validate", "maybe"],
            "ERROR: command line: invalid value 'maybe' for --skills-validate"
            " (use one of: true, false)",
        ),
        (
            ["--skills-rule-severity", "body-empty=never"],
            "ERROR: command line: rule severity: invalid level 'never' for body-empty"
            " (choose from error, warning, off)",
        ),
    ],
)
def test_bad_settings_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_settings_relax_and_switch_off(pytester: pytest.Pytester, skills: Path) -> None:
    off = run(pytester, "--skills-validate", "false")
    assert off.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    pytester.makeini(
        "[pytest]\nskills_allow_unknown_fields = true\n"
        "skills_rule_severity =\n    reference-missing=warning\n    name-charset=off\n"
        "    tools-not-identifier=off\n"
    )
    relaxed = run(pytester, "skills/Bad_Name")
    relaxed.assert_outcomes(passed=ITEMS, warnings=2)


def test_a_bad_rule_severity_names_where_it_was_set(
    pytester: pytest.Pytester, skills: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nskills_rule_severity =\n    body-empty=loud\n")
    from_file = run(pytester)
    assert from_file.ret == pytest.ExitCode.USAGE_ERROR
    from_file.stderr.fnmatch_lines(
        [
            "ERROR: */tox.ini: skills_rule_severity: rule severity: invalid level 'loud' for"
            " body-empty (choose from error, warning, off)"
        ]
    )
    monkeypatch.setenv("SKILLS_RULE_SEVERITY", "nope=off")
    from_environment = run(pytester)
    assert from_environment.ret == pytest.ExitCode.USAGE_ERROR
    from_environment.stderr.fnmatch_lines(
        [
            "ERROR: environment variable SKILLS_RULE_SEVERITY: rule severity: unknown rule id"
            " 'nope' ('agent-skills rules' lists every rule id)"
        ]
    )


def test_available_tools(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path, "weather", body="Tools:\n- get_weather\n- get_forecast\n")
    args = ("--skills-profile", "trpc", "--skills-available-tool", "get_weather")
    result = run(pytester, *args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["weather/SKILL.md:7: error [[]tools-unknown[]] tool 'get_forecast' is not among the*"]
    )


def test_junit_xml_carries_skill_name_and_path_under_xunit1(
    pytester: pytest.Pytester, skills: Path
) -> None:
    xunit1 = ("--junitxml=report.xml", "-o", "junit_family=xunit1", "skills/Bad_Name")
    run(pytester, *xunit1)
    (case,) = ET.parse(pytester.path / "report.xml").findall(".//testcase")
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties == {"skill_name": "Bad_Name", "skill_path": "skills/Bad_Name/SKILL.md"}
    assert case.get("name") == "validate"
    run(pytester, *xunit1, *PER_CHECK)
    cases = ET.parse(pytester.path / "report.xml").findall(".//testcase")
    assert len(cases) == CHECK_COUNT
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["skill_name"] == "Bad_Name"
        assert properties["skill_path"] == "skills/Bad_Name/SKILL.md"
        assert properties["skill_check"] == case.get("name")


def test_junit_xml_names_the_file_from_the_rootdir_under_xunit1(
    pytester: pytest.Pytester, skills: Path
) -> None:
    """The item's location: the SKILL.md from the rootdir, with ``../`` for a skill root
    outside it."""
    outside = pytester.path.parent / f"{pytester.path.name}-outside"
    write_skill(outside, "far")
    pytester.makeini("[pytest]\n")  # the rootdir, whatever the paths given
    xunit1 = ("--junitxml=report.xml", "-o", "junit_family=xunit1", "--skills-root", str(outside))
    run(pytester, *xunit1, "skills/good", str(outside), *PER_CHECK)
    cases = ET.parse(pytester.path / "report.xml").findall(".//testcase")
    assert {(case.get("file"), case.get("line")) for case in cases} == {
        ("skills/good/SKILL.md", "0"),
        (f"../{outside.name}/far/SKILL.md", "0"),
    }
    assert len(cases) == 2 * CHECK_COUNT


def _outcomes(result: pytest.RunResult) -> list[str]:
    lines = [
        line
        for line in result.stdout.lines
        if line.startswith(("PASSED ", "FAILED ", "SKIPPED ", "ERROR "))
    ]
    return sorted(lines)


@pytest.mark.parametrize(
    ("shape", "outcomes"),
    [(ITEMS, 4), (CHECK_COUNT, 4 * CHECK_COUNT - 3)],  # skipped ones are grouped per file
    ids=["skill", "check"],
)
def test_results_are_identical_under_xdist(
    pytester: pytest.Pytester, skills: Path, shape: int, outcomes: int
) -> None:
    write_skill(pytester.path / ".claude" / "skills", "good", front="name: good\ndescription: D.\n")
    args = [*QUIET_PLUGINS, "-rA", "--skills-root", ".claude/skills"]
    if shape == CHECK_COUNT:
        args += PER_CHECK
    serial = pytester.runpytest_subprocess(*args)
    parallel = pytester.runpytest_subprocess(*args, "-n", "2")
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
    assert _outcomes(serial) == _outcomes(parallel)
    assert len(_outcomes(serial)) == outcomes
    parallel.stdout.fnmatch_lines(
        ["*.claude/skills/good/SKILL.md:2: error [[]name-duplicate[]] skill 'good' is also*"]
    )


def test_names_that_need_a_full_parse_still_name_the_node(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path, "quoted", front="name: \"quoted\"\ndescription: D.\n")
    write_skill(pytester.path, "crlf")
    crlf = pytester.path / "crlf" / "SKILL.md"
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    result = run(pytester, "--collect-only")
    result.stdout.fnmatch_lines(["*<SkillFile crlf>", "*<SkillFile quoted>"])
    run(pytester, "-k", "quoted").assert_outcomes(passed=ITEMS)


IN_PROCESS_TWICE = '''
import yaml  # noqa: F401  (its C part cannot be imported afresh: a suite imports it up front)

pytest_plugins = ["pytester"]


def test_two_runs(pytester):
    folder = pytester.path / "skills" / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\\nname: [broken\\n---\\nBody.\\n")
    for _ in range(2):
        result = pytester.runpytest("-p", "no:cacheprovider", "skills")
        result.assert_outcomes(failed=1)
'''


def test_in_process_runs_one_after_another_fail_alike(pytester: pytest.Pytester) -> None:
    # pytester drops the modules an in-process run imported; the second run must not mix the
    # rule modules of the first (whose Severity.ERROR is another object) with its own.  In a
    # fresh process, so that no test module of this suite has imported the rules already.
    pytester.makepyfile(test_inner=IN_PROCESS_TWICE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_inner.py")
    result.assert_outcomes(passed=1)
