"""``agent-skills coverage``: which skills have evals, trigger queries and scenarios and whether
each is recorded; the ``--min-coverage`` gate; the typed report and its schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pytest_agent_skills.evals.documents.catalog import schema_file, schema_of
from pytest_agent_skills.gate.coverage_model import CoverageReport
from tests.support.cli import cli
from tests.support.skill_files import write_skill

pytestmark = pytest.mark.usefixtures("clean_settings_env")

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite"
EVALS = json.dumps(
    {
        "skill_name": "csv-summary",
        "evals": [
            {"id": number, "prompt": "Sum it.", "expectations": ["It gives the sum"]}
            for number in (1, 2)
        ],
    }
)
TRIGGERS = json.dumps([{"query": "sum this csv", "should_trigger": True}])


def test_the_shipped_schema_is_the_one_the_model_generates() -> None:
    shipped = schema_file("coverage").read_text(encoding="utf-8")
    assert shipped == schema_of(CoverageReport, "coverage"), (
        "schemas/coverage.schema.json is stale: write schema_of(CoverageReport, 'coverage') into it"
    )
    Draft202012Validator.check_schema(json.loads(shipped))


def test_the_example_suite_skills_with_recorded_evals_and_a_trigger_matrix_are_covered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(EXAMPLE, suite, symlinks=True)
    monkeypatch.chdir(suite)

    status, out, err = cli(capsys, "coverage", "--format", "json", ".claude/skills")

    assert (status, err) == (0, "")
    document = json.loads(out)
    Draft202012Validator(json.loads(schema_file("coverage").read_text())).validate(document)
    assert document["$schema"] == "pytest-agent-skills:schemas/coverage.schema.json"
    by_name = {skill["name"]: skill for skill in document["skills"]}
    invoice = by_name["invoice-totals"]
    assert invoice["evals"] == {"count": 2, "recorded": 2, "error": ""}
    assert invoice["triggers"] == {"count": 3, "recorded": 3, "error": ""}
    assert invoice["covered"] is True
    assert by_name["meeting-notes"]["covered"] is False  # a scenario, no eval
    assert by_name["meeting-notes"]["scenarios"]["count"] == 1

    monkeypatch.chdir(suite / "overlap")
    status, out, _err = cli(capsys, "coverage", "--min-coverage", "1", "skills")
    assert status == 0
    assert out.splitlines()[-2].startswith("3 of 3 skill(s) covered (100%)")


def test_unrecorded_evals_and_a_broken_file_are_shown_and_fail_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "skills", files={"evals/evals.json": EVALS})
    write_skill(tmp_path / "skills", "broken", files={"evals/triggers.json": "[{"})
    write_skill(tmp_path / "skills", "bare")
    recording = tmp_path / "eval-cassettes" / "csv-summary" / "eval-1" / "with_skill"
    recording.mkdir(parents=True)
    (recording / "run-1.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    status, out, _err = cli(capsys, "coverage", "--min-coverage", "0.5", "skills")

    assert status == 1
    lines = out.splitlines()
    assert "none  skills/bare: evals 0/0, trigger queries 0/0, scenarios 0/0 recorded" in lines
    assert (
        "none  skills/broken: evals 0/0, trigger queries 0/0 (unreadable), scenarios 0/0 recorded"
    ) in lines
    assert (
        "part  skills/csv-summary: evals 1/2, trigger queries 0/0, scenarios 0/0 recorded"
    ) in lines
    assert lines[-1] == "--min-coverage 50%: NOT met"

    status, _out, err = cli(capsys, "coverage", "--min-coverage", "50", "skills")
    assert status == 2
    assert "--min-coverage is a share of the skills from 0 to 1 (0.8: four in five), got 50.0" in (
        err
    )
