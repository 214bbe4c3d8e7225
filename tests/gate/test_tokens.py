"""``agent-skills tokens``: what each skill costs an agent, the budgets (warnings unless
``--budget-fail``), ``--compare REF`` against a git ref, the typed report and its schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pytest_agent_skills.evals.documents.catalog import schema_file, schema_of
from pytest_agent_skills.gate.token_model import TokenReport
from pytest_agent_skills.tokens import estimate_tokens
from tests.support.cli import cli
from tests.support.git_repos import commit_all, git, skills_repository
from tests.support.skill_files import write_skill

pytestmark = pytest.mark.usefixtures("clean_settings_env")

LONG_BODY = "Read the invoice and add every line item to the running total.\n" * 300


def test_the_shipped_schema_is_the_one_the_model_generates() -> None:
    shipped = schema_file("tokens").read_text(encoding="utf-8")
    assert shipped == schema_of(TokenReport, "tokens"), (
        "schemas/tokens.schema.json is stale: write schema_of(TokenReport, 'tokens') into it"
    )
    Draft202012Validator.check_schema(json.loads(shipped))


def test_the_estimate_counts_words_symbols_and_other_scripts() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("Read the file") == 3
    assert estimate_tokens("internationalization") == 1 + round((20 - 7) / 4)
    assert estimate_tokens("2026") == 4  # a token per digit
    assert estimate_tokens("日本語") >= 4  # nine UTF-8 bytes


def test_each_part_of_a_skill_is_counted_and_the_json_report_meets_its_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_skill(tmp_path, files={"references/api.md": "# API\n\nCall it twice.\n"})

    status, out, err = cli(capsys, "tokens", "--format", "json", str(folder))

    assert (status, err) == (0, "")
    document = json.loads(out)
    Draft202012Validator(json.loads(schema_file("tokens").read_text())).validate(document)
    assert document["$schema"] == "pytest-agent-skills:schemas/tokens.schema.json"
    (skill,) = document["skills"]
    assert skill["name"] == "csv-summary"
    assert skill["description"] == estimate_tokens(
        "csv-summary: Summarises CSV files. Use when the user asks about a CSV."
    )
    assert skill["body"] == estimate_tokens("Run the steps.\n")
    assert skill["docs"] == [
        {"path": "references/api.md", "tokens": estimate_tokens("# API\n\nCall it twice.\n")}
    ]
    assert document["listing"] == skill["description"]
    assert document["over"] == []
    assert document["budgets"] == {"body": 2500, "doc": 5000, "listing": 2000, "fail": False}


def test_a_body_over_its_budget_is_a_warning_and_an_error_with_budget_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_skill(tmp_path, body=LONG_BODY)
    tokens = estimate_tokens(LONG_BODY)

    status, out, _err = cli(capsys, "tokens", str(folder))

    assert status == 0
    assert (
        f"warning: [budget-body] csv-summary: body: {tokens:,} tokens, over the budget of 2,500"
    ) in out.splitlines()
    assert "1 over a budget: warnings (--budget-fail makes them errors)" in out.splitlines()

    status, _out, _err = cli(
        capsys, "tokens", "--budget-fail", "--budget-body", "9999", str(folder)
    )
    assert status == 0

    status, out, _err = cli(capsys, "tokens", "--budget-fail", str(folder))
    assert status == 1
    assert f"error: [budget-body] csv-summary: body: {tokens:,} tokens" in out


def test_a_budget_comes_from_the_configuration_file_and_a_bad_one_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "skills")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\nskills_budget_listing = 5\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)

    status, out, _err = cli(capsys, "tokens", "skills")
    assert status == 0
    assert "over the budget of 5" in out

    monkeypatch.setenv("SKILLS_BUDGET_BODY", "-3")
    status, _out, err = cli(capsys, "tokens", "skills")
    assert status == 2
    assert (
        "error: environment variable SKILLS_BUDGET_BODY: --budget-body is a number of tokens,"
        " 0 or more, got -3"
    ) in err


def test_compare_prints_each_skills_change_and_fails_past_the_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = skills_repository(tmp_path, 3)
    grown = folders[1] / "SKILL.md"
    grown.write_text(grown.read_text(encoding="utf-8") + LONG_BODY, encoding="utf-8")
    write_skill(tmp_path / "skills", "new-skill")
    commit_all(tmp_path, "grow one, add one")
    monkeypatch.chdir(tmp_path)
    commit = git(tmp_path, "rev-parse", "--short=7", "HEAD~1").strip()

    status, out, _err = cli(capsys, "tokens", "--compare", "HEAD~1", "skills")

    assert status == 1
    lines = out.splitlines()
    start = lines.index(f"compared with HEAD~1 ({commit}): a skill may grow by 10%")
    assert lines[start + 1].startswith("  new   new-skill: ")
    base = estimate_tokens(
        "skill-000: Summarises CSV files. Use when the user asks about a CSV."
    ) + estimate_tokens("Run the steps.\n")
    assert lines[start + 2] == f"  ok    skill-000: {base} -> {base} (+0.0%)"
    assert lines[start + 3].startswith(f"  FAIL  skill-001: {base} -> ")
    status, out, _err = cli(capsys, "tokens", "--compare", "HEAD~1", "--format", "json", "skills")
    changes = {change["name"]: change for change in json.loads(out)["compare"]["changes"]}
    assert changes["new-skill"]["before"] is None
    assert changes["skill-001"]["over_threshold"] is True

    status, _out, err = cli(capsys, "tokens", "--compare", "no-such-ref", "skills")
    assert status == 2
    assert "--compare no-such-ref: unknown git ref 'no-such-ref'" in err
