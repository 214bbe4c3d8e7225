"""`agent-skills validate`: exit codes, text / JSON / SARIF output, paths and URLs."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from pytest_httpserver import HTTPServer

from pytest_agent_skills.cli import main
from tests.support.cli import cli, named_document
from tests.support.skill_files import write_skill

# The parts of the SARIF 2.1.0 schema (OASIS sarif-schema-2.1.0.json) our output uses, with
# their required properties and enums, plus what GitHub code scanning needs to place a result
# inline (ruleId, a message text, an artifact URI and a start line).
SARIF_SUBSET_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/run"}},
    },
    "$defs": {
        "run": {
            "type": "object",
            "required": ["tool", "results"],
            "properties": {
                "tool": {
                    "type": "object",
                    "required": ["driver"],
                    "properties": {"driver": {"$ref": "#/$defs/toolComponent"}},
                },
                "originalUriBaseIds": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["uri"],
                        "properties": {"uri": {"type": "string", "pattern": "/$"}},
                    },
                },
                "results": {"type": "array", "items": {"$ref": "#/$defs/result"}},
            },
        },
        "toolComponent": {
            "type": "object",
            "required": ["name", "rules"],
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "rules": {"type": "array", "items": {"$ref": "#/$defs/reportingDescriptor"}},
            },
        },
        "reportingDescriptor": {
            "type": "object",
            "required": ["id", "shortDescription", "defaultConfiguration"],
            "properties": {
                "id": {"type": "string"},
                "shortDescription": {"$ref": "#/$defs/message"},
                "defaultConfiguration": {
                    "type": "object",
                    "properties": {"level": {"$ref": "#/$defs/level"}},
                },
            },
        },
        "level": {"enum": ["none", "note", "warning", "error"]},
        "message": {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string", "minLength": 1}},
        },
        "result": {
            "type": "object",
            "required": ["ruleId", "ruleIndex", "level", "message", "locations"],
            "properties": {
                "ruleId": {"type": "string"},
                "ruleIndex": {"type": "integer", "minimum": 0},
                "level": {"$ref": "#/$defs/level"},
                "message": {"$ref": "#/$defs/message"},
                "locations": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["physicalLocation"],
                        "properties": {"physicalLocation": {"$ref": "#/$defs/physicalLocation"}},
                    },
                },
            },
        },
        "physicalLocation": {
            "type": "object",
            "required": ["artifactLocation"],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "required": ["uri"],
                    "properties": {"uri": {"type": "string"}, "uriBaseId": {"type": "string"}},
                },
                "region": {
                    "type": "object",
                    "required": ["startLine"],
                    "properties": {"startLine": {"type": "integer", "minimum": 1}},
                },
            },
        },
    },
}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLS_CACHE_DIR", str(tmp_path / "cache"))
    write_skill(tmp_path / "skills", "good")
    write_skill(tmp_path / "skills", "bad", front="name: Bad\ndescription: D.\nauthor: me\n")
    write_skill(tmp_path / "skills", "warned", front="name: warned\ndescription: D.\n", body="")
    return tmp_path


def test_text_report_in_line_order_and_exit_one_on_errors(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = cli(capsys, "validate", "skills")
    assert status == 1
    assert out.splitlines() == [
        "skills/bad/SKILL.md:2: error [name-charset] name 'Bad' may only contain lowercase letters"
        " a-z, digits 0-9 and hyphens; found 'B'. Use e.g. 'bad'.",
        "skills/bad/SKILL.md:2: error [name-directory] name 'Bad' must equal the skill's folder"
        " name 'bad'. Rename the folder or set 'name: bad'.",
        "skills/bad/SKILL.md:4: error [field-unknown] unknown top-level field 'author': the spec"
        " profile allows only allowed-tools, compatibility, description, license, metadata, name;"
        " move it under 'metadata:' (e.g. metadata: {author: \"...\"}) or remove it.",
        "skills/warned/SKILL.md:5: warning [body-empty] SKILL.md has no instructions after the"
        " front matter. Add the steps the agent should follow, with examples.",
        "findings per rule (count, skills, severity, rule):",
        "  1 1  error    field-unknown",
        "  1 1  error    name-charset",
        "  1 1  error    name-directory",
        "  1 1  warning  body-empty",
        "3 skill(s) checked: 3 error(s), 1 warning(s); 1 skill(s) failed",
    ]


def test_exit_zero_when_only_warnings(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "validate", "skills/good", "skills/warned/SKILL.md")[0] == 0


def test_json_report(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "validate", "--format", "json", "skills")
    assert status == 1
    document = named_document(out, "validate")
    assert document["summary"] == {"skills": 3, "errors": 3, "warnings": 1, "suppressed": 0}
    assert [(s["path"], s["name"], s["ok"]) for s in document["skills"]] == [
        ("skills/bad", "Bad", False),
        ("skills/good", "good", True),
        ("skills/warned", "warned", True),
    ]
    assert document["skills"][0]["findings"][0] == {
        "rule": "field-unknown",
        "severity": "error",
        "message": "unknown top-level field 'author': the spec profile allows only allowed-tools,"
        " compatibility, description, license, metadata, name; move it under 'metadata:'"
        ' (e.g. metadata: {author: "..."}) or remove it.',
        "line": 4,
    }
    assert document["skills"][2]["findings"][0]["severity"] == "warning"


def test_sarif_report(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "validate", "--format", "sarif", "skills")
    assert status == 1
    document = json.loads(out)
    jsonschema.validate(document, SARIF_SUBSET_SCHEMA)
    run_ = document["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    results = run_["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("field-unknown", "error"),
        ("name-charset", "error"),
        ("name-directory", "error"),
        ("body-empty", "warning"),
    ]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "skills/bad/SKILL.md", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 4},
    }
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"


def test_options_relax_and_tighten(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", "skills/bad", "--allow-unknown-fields"]
    args += ["--rule-severity", "name-charset=off", "--rule-severity", "name-directory=warning"]
    status, out, _ = cli(capsys, *args)
    assert status == 0
    assert out.endswith("1 skill(s) checked: 0 error(s), 2 warning(s); 0 skill(s) failed\n")
    status, out, _ = cli(capsys, "validate", "skills/warned", "--rule-severity", "body-empty=error")
    assert status == 1


def test_available_tools_and_profile(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(
        tree / "more",
        "cc",
        front="name: cc\ndescription: D.\nwhen_to_use: often\n",
        body="Tools:\n- get_weather\n",
    )
    assert cli(capsys, "validate", "more/cc")[0] == 1
    assert cli(capsys, "validate", "more/cc", "--profile", "claude-code")[0] == 0
    args = ["validate", "more/cc", "--profile", "trpc", "--allow-unknown-fields"]
    status, out, _ = cli(capsys, *args, "--available-tool", "x")
    assert status == 1
    assert "error [tools-unknown] tool 'get_weather' is not among the available tools (x)" in out
    status, _, err = cli(
        capsys, "validate", "more/cc", "--profile", "claude-code", "--available-tool", "x"
    )
    assert status == 2
    assert err.endswith(
        "agent-skills validate: error: available tools are checked against the Tools: section"
        " of the tRPC runtime, which the claude-code profile does not check: add the trpc"
        " profile (--skills-profile trpc, or --profile trpc with agent-skills validate)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["validate", "nowhere"], "agent-skills validate: error: nowhere: no such file or folder"),
        (
            ["validate", "empty"],
            "agent-skills validate: error: no skill found under empty (a skill is a folder"
            " holding SKILL.md)",
        ),
        (
            ["validate", "skills", "--rule-severity", "nope=off"],
            "agent-skills validate: error: command line: rule severity: unknown rule id 'nope'"
            " ('agent-skills rules' lists every rule id)",
        ),
        (
            ["validate", "ftp://example.invalid/x.zip"],
            "agent-skills validate: error: *ftp*",
        ),
    ],
)
def test_usage_errors_exit_two(
    tree: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tree / "empty").mkdir()
    status, out, err = cli(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.startswith("usage: agent-skills validate")
    from fnmatch import fnmatch

    assert fnmatch(err.splitlines()[-1], message), err


def test_argparse_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    for args in ([], ["validate", "x", "--format", "xml"], ["frobnicate"]):
        with pytest.raises(SystemExit) as excinfo:
            main(args)
        assert excinfo.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_output_file(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "validate", "skills/good", "--format", "json", "-o", "r.json")
    assert (status, out) == (0, "")
    assert json.loads((tree / "r.json").read_text())["summary"]["skills"] == 1


def test_file_and_http_urls(
    tree: Path, capsys: pytest.CaptureFixture[str], httpserver: HTTPServer
) -> None:
    status, out, _ = cli(capsys, "validate", "--format", "json", (tree / "skills").as_uri())
    assert status == 1
    assert len(json.loads(out)["skills"]) == 3
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("weather/SKILL.md", "---\nname: weather\ndescription: D.\n---\nBody.\n")
    httpserver.expect_request("/skills.zip").respond_with_data(
        archive.getvalue(), content_type="application/zip"
    )
    status, out, _ = cli(capsys, "validate", "--format", "json", httpserver.url_for("/skills.zip"))
    assert status == 0
    (skill,) = json.loads(out)["skills"]
    assert (skill["name"], skill["ok"]) == ("weather", True)


def test_console_script_runs_as_a_real_process(tree: Path) -> None:
    script = Path(sys.executable).with_name("agent-skills")
    command = (
        [str(script)] if script.exists() else [sys.executable, "-m", "pytest_agent_skills.cli"]
    )
    done = subprocess.run(
        [*command, "validate", "skills/good", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"] == {
        "skills": 1,
        "errors": 0,
        "warnings": 0,
        "suppressed": 0,
    }


def test_validate_called_in_a_process_leaves_its_garbage_collector_on(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only the agent-skills program, which ends with its report, turns the collector off.
    assert gc.isenabled()
    assert main(["validate", "skills/good"]) == 0
    assert gc.isenabled()


# --- what a linter user expects: --version, a default path, --exit-zero, CI formats, rule docs ---


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_agent_skills import __version__

    with pytest.raises(SystemExit) as excinfo:
        main(["--version"])
    assert excinfo.value.code == 0
    assert capsys.readouterr().out == f"agent-skills {__version__}\n"


def test_the_default_path_is_the_current_folder(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = cli(capsys, "validate")
    assert status == 1
    assert out.endswith("3 skill(s) checked: 3 error(s), 1 warning(s); 1 skill(s) failed\n")
    status, out, _ = cli(capsys, "validate", "--format", "json", ".", "skills", "skills/bad")
    assert json.loads(out)["summary"]["skills"] == 3  # each skill once, however often named


def test_exit_zero_reports_and_succeeds(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "validate", "--exit-zero", "skills")
    assert status == 0
    assert "error [name-charset]" in out


def test_github_annotations(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "validate", "--format", "github", "skills/bad", "skills/warned")
    assert status == 1
    assert out.splitlines() == [
        "::error file=skills/bad/SKILL.md,line=2,title=name-charset (Bad)::name 'Bad' may only"
        " contain lowercase letters a-z, digits 0-9 and hyphens; found 'B'. Use e.g. 'bad'.",
        "::error file=skills/bad/SKILL.md,line=2,title=name-directory (Bad)::name 'Bad' must"
        " equal the skill's folder name 'bad'. Rename the folder or set 'name: bad'.",
        "::error file=skills/bad/SKILL.md,line=4,title=field-unknown (Bad)::unknown top-level"
        " field 'author': the spec profile allows only allowed-tools, compatibility, description,"
        " license, metadata, name; move it under 'metadata:' (e.g. metadata: {author: \"...\"})"
        " or remove it.",
        "::warning file=skills/warned/SKILL.md,line=5,title=body-empty (warned)::SKILL.md has no"
        " instructions after the front matter. Add the steps the agent should follow, with"
        " examples.",
        "2 skill(s) checked: 3 error(s), 1 warning(s); 1 skill(s) failed",
    ]


def test_github_annotations_escape_workflow_command_characters() -> None:
    from pytest_agent_skills.codescan import _workflow_escape

    assert _workflow_escape("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert _workflow_escape("a:b,c", property_value=True) == "a%3Ab%2Cc"


def test_junit_report_has_the_junit_10_shape(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xml.etree import ElementTree

    from tests.support.junit_shape import problems

    status, out, _ = cli(capsys, "validate", "--format", "junit", "skills")
    assert status == 1
    assert problems(out) == []
    suite = ElementTree.fromstring(out).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("21", "2")
    failed = {
        (case.get("classname"), case.get("name")): case.find("failure")
        for case in suite.iter("testcase")
        if case.find("failure") is not None
    }
    assert sorted(failed) == [("skills/bad/SKILL.md", "fields"), ("skills/bad/SKILL.md", "name")]
    name_failure = failed[("skills/bad/SKILL.md", "name")]
    assert name_failure.get("type") == "name-charset"
    assert name_failure.text.splitlines() == [
        "skills/bad/SKILL.md:2: error [name-charset] name 'Bad' may only contain lowercase"
        " letters a-z, digits 0-9 and hyphens; found 'B'. Use e.g. 'bad'.",
        "skills/bad/SKILL.md:2: error [name-directory] name 'Bad' must equal the skill's folder"
        " name 'bad'. Rename the folder or set 'name: bad'.",
    ]
    (warned,) = [c for c in suite.iter("testcase") if c.find("system-out") is not None]
    assert (warned.get("classname"), warned.get("name")) == ("skills/warned/SKILL.md", "body")


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_agent_skills.rules import RULES

    status, out, _ = cli(capsys, "rules")
    assert status == 0
    from pytest_agent_skills.audit.catalogue import AUDIT_RULES

    lines = out.splitlines()
    validation, audit = lines[: len(RULES) + 1], lines[len(RULES) + 2 :]
    assert [line.split()[0] for line in validation[:-1]] == list(RULES)
    assert lines[0].split(maxsplit=3) == [
        "skill-md-encoding", "frontmatter", "error", "SKILL.md is not valid UTF-8"
    ]
    assert validation[-1] == (
        f"{len(RULES)} rules; 'agent-skills rule ID' shows one rule's documentation"
    )
    assert audit[0] == "audit rules (agent-skills audit):"
    assert [line.split()[0] for line in audit[1:-1]] == list(AUDIT_RULES)
    assert audit[-1] == f"{len(AUDIT_RULES)} audit rules"


def test_rule_prints_its_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "rule", "reference-missing")
    assert status == 0
    assert out.splitlines()[:5] == [
        "reference-missing: error, check 'references', source: guidance",
        "  a file the body refers to does not exist",
        "",
        "What it finds: a file the body refers to that does not exist: a relative link or image"
        " (`[guide](docs/guide.md)`), a reference definition (`[1]: docs/guide.md`, reported at"
        " the definition), or a bare path under `scripts/`, `references/`, `assets/` or any"
        " top-level folder of the skill (`python scripts/x.py`, `__BASE_DIR__/assets/t.txt`);"
        ' not in Markdown examples or HTML comments (see "What the body refers to")',
        "How to fix: add the file or fix the path",
    ]


def test_every_rule_has_documentation() -> None:
    from pytest_agent_skills.rules import RULES
    from pytest_agent_skills.rules.docs import rule_docs

    assert sorted(rule_docs()) == sorted(RULES)


def test_audit_and_validate_rule_ids_are_distinct_and_each_has_its_page(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``agent-skills rule ID`` serves both catalogues from one namespace: an id in both would
    show one rule's page for the other's findings (and --select/--ignore would be ambiguous)."""
    from pytest_agent_skills.audit.catalogue import AUDIT_RULES
    from pytest_agent_skills.rules import RULES

    assert set(RULES) & set(AUDIT_RULES) == set()
    repo = Path(__file__).resolve().parents[2]
    pages = {
        "validate": (repo / "docs" / "rules.md").read_text(encoding="utf-8"),
        "audit": (repo / "docs" / "audit.md").read_text(encoding="utf-8"),
    }
    undocumented = []
    for kind, ids in (("validate", RULES), ("audit", AUDIT_RULES)):
        for rule_id in ids:
            status, out, err = cli(capsys, "rule", rule_id)
            lines = out.splitlines()
            finds = next((line for line in lines if line.startswith("What it finds: ")), "")
            fix = next((line for line in lines if line.startswith("How to fix: ")), "")
            shown = status == 0 and lines[0].startswith(f"{rule_id}: ") and not err
            if not (shown and finds.strip(": ") and fix.strip(": ")):
                undocumented.append(f"{rule_id} (agent-skills rule)")
            if f"\n| `{rule_id}` |" not in pages[kind]:
                undocumented.append(f"{rule_id} (no row in the {kind} rule page)")
    assert undocumented == []
    assert RULES and AUDIT_RULES  # both catalogues were read


def test_an_unknown_rule_points_at_the_rules_command(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "rule", "name-charst")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "agent-skills rule: error: unknown rule id 'name-charst'; did you mean 'name-charset'?"
        " 'agent-skills rules' lists every rule"
    )


def test_the_text_report_ends_with_counts_per_rule_most_frequent_error_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A repository where one rule fails often, in a few skills, another once, a warning a lot.
    monkeypatch.chdir(tmp_path)
    for index in range(3):
        write_skill(
            tmp_path / "skills",
            f"linker-{index}",
            body="Read [a](docs/a.md), [b](docs/b.md).\n" if index else "Read [a](docs/a.md).\n",
        )
    write_skill(tmp_path / "skills", "Upper")
    for index in range(4):
        write_skill(tmp_path / "skills", f"empty-{index}", body="")
    status, out, _ = cli(capsys, "validate", "skills", "--rule-severity", "body-empty=warning")
    assert status == 1
    lines = out.splitlines()
    start = lines.index("findings per rule (count, skills, severity, rule):")
    assert lines[start + 1 :] == [
        "  5 3  error    reference-missing",
        "  1 1  error    name-charset",
        "  4 4  warning  body-empty",
        "8 skill(s) checked: 6 error(s), 4 warning(s); 4 skill(s) failed",
    ]


def test_no_finding_no_counts(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "validate", "skills/good")
    assert status == 0
    assert out == "1 skill(s) checked: 0 error(s), 0 warning(s); 0 skill(s) failed\n"


@pytest.mark.parametrize("marker", ["pyproject.toml", ".git"])
def test_sarif_uris_are_relative_to_the_repository_root_wherever_it_runs(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    if marker == ".git":
        (tree / ".git").mkdir()
    else:
        (tree / marker).write_text("[tool.pytest.ini_options]\n")
    write_skill(tree / "skills" / "nested" / "deeper", "Inner")
    monkeypatch.chdir(tree / "skills" / "nested")
    for arguments in (["deeper"], [str(tree / "skills" / "nested" / "deeper" / "Inner")]):
        status, out, _ = cli(capsys, "validate", "--format", "sarif", *arguments)
        assert status == 1
        document = json.loads(out)
        jsonschema.validate(document, SARIF_SUBSET_SCHEMA)
        run_ = document["runs"][0]
        assert run_["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tree.as_uri() + "/"}}
        locations = {
            json.dumps(result["locations"][0]["physicalLocation"]["artifactLocation"])
            for result in run_["results"]
        }
        assert locations == {
            json.dumps(
                {"uri": "skills/nested/deeper/Inner/SKILL.md", "uriBaseId": "%SRCROOT%"}
            )
        }


def test_sarif_outside_any_repository_is_relative_to_the_current_folder(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = cli(capsys, "validate", "--format", "sarif", "skills/bad")
    assert status == 1
    run_ = json.loads(out)["runs"][0]
    assert run_["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tree.as_uri() + "/"}}
    uri = run_["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "skills/bad/SKILL.md"


def test_the_program_writes_its_whole_report_before_it_ends(tmp_path: Path) -> None:
    # The program ends without tearing the interpreter down: every byte must be out first.
    for index in range(300):
        write_skill(tmp_path / "skills", f"Bad_{index:03d}")
    command = [sys.executable, "-m", "pytest_agent_skills.cli", "validate", "skills"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 300 + 3  # the findings, the count per rule, the summary
    assert lines[-1] == "300 skill(s) checked: 300 error(s), 0 warning(s); 300 skill(s) failed"
    written = subprocess.run(
        [*command, "--format", "json", "-o", "report.json"], cwd=tmp_path, check=False
    )
    assert written.returncode == 1
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["skills"] == 300
