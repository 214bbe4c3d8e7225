"""``agent-skills mutate`` on the fixture skill with a strong and a weak scenario suite: the
scores, the survivors and their diffs, the untouched skill, a rerun, the report's schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_agent_skills.evals.documents.catalog import schema_file, schema_of
from pytest_agent_skills.mutate.report import MutationReport
from tests.support.cli import cli
from tests.support.mutation import SKILL, folder_bytes, mutation_project

pytestmark = pytest.mark.usefixtures("clean_settings_env")



def _mutate(
    capsys: pytest.CaptureFixture[str], project: Path, *args: str
) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        return cli(capsys, "mutate", SKILL, "--jobs", "2", *args)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict, dict]]:
    """Each suite's project, its folder before, and its JSON report (one run per suite)."""
    from pytest_agent_skills.cli import main

    found = {}
    for suite in ("strong", "weak"):
        project = mutation_project(tmp_path_factory.mktemp(suite), suite)
        before = folder_bytes(project)
        out = project.parent / f"{suite}.json"
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(project)
            status = main(["mutate", SKILL, "--format", "json", "-o", str(out), "-q"])
        assert status == 0
        found[suite] = (project, before, json.loads(out.read_text(encoding="utf-8")))
    return found


def test_the_strong_suite_kills_most_mutants_and_the_weak_one_almost_none(runs: dict) -> None:
    strong, weak = runs["strong"][2]["summary"], runs["weak"][2]["summary"]
    assert strong["mutants"] == weak["mutants"] == 30
    assert strong["score"] >= 0.85, strong
    assert weak["score"] <= 0.1, weak
    assert strong["errors"] == weak["errors"] == 0
    assert strong["score"] == round(strong["killed"] / (strong["killed"] + strong["survived"]), 4)


def test_every_operator_kind_is_among_the_mutants(runs: dict) -> None:
    operators = {mutant["operator"] for mutant in runs["strong"][2]["mutants"]}
    assert {
        "arithmetic", "comparison", "constant", "swapped-call", "deleted-statement",
        "early-exit", "unwritten-output", "deleted-step", "deleted-paragraph",
        "dropped-constraint", "changed-command", "removed-doc", "broken-link",
        "narrowed-description", "broadened-description", "truncated-description",
    } <= operators


def test_a_killed_mutant_names_the_check_that_failed(runs: dict) -> None:
    [boundary] = [
        m for m in runs["strong"][2]["mutants"] if m["operator"] == "comparison" and m["line"] == 15
    ]
    assert (boundary["file"], boundary["status"]) == ("scripts/total.py", "killed")
    assert boundary["killed_by"] == (
        "suites/strong/order.scenario.yaml:41 an order of exactly 100 gets the discount"
    )
    assert "-    if total >= 100:\n+    if total > 100:\n" in boundary["diff"]


def test_the_skill_folder_is_byte_identical_afterwards(runs: dict) -> None:
    for project, before, _report in runs.values():
        assert folder_bytes(project) == before


def test_the_report_matches_its_published_schema(runs: dict) -> None:
    schema = json.loads(schema_file("mutation").read_text(encoding="utf-8"))
    assert schema == json.loads(schema_of(MutationReport, "mutation"))
    for _project, _before, report in runs.values():
        assert report["$schema"].endswith("/mutation.schema.json")
        jsonschema.validate(report, schema)
        assert set(report) == {"$schema", "skill", "mutants", "summary"}
        assert set(report["summary"]) == {"mutants", "killed", "survived", "errors", "score"}


def test_a_rerun_gives_the_same_mutants_and_verdicts(
    runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    project, _before, first = runs["weak"]
    status, out, _err = _mutate(capsys, project, "--format", "json", "--jobs", "1")
    assert status == 0
    assert json.loads(out) == first


def test_the_text_report_shows_survivors_first_with_their_diff_and_a_hint(
    runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    project = runs["strong"][0]
    status, out, _err = _mutate(capsys, project, "-q")
    assert status == 0
    lines = out.splitlines()
    first_survivor = next(i for i, line in enumerate(lines) if line.endswith(" survived"))
    first_killed = next(i for i, line in enumerate(lines) if " killed by " in line)
    assert first_survivor < first_killed
    assert "M01 broadened-description SKILL.md:3 survived" in lines
    at = lines.index("M01 broadened-description SKILL.md:3 survived")
    assert lines[at + 1].startswith("  hint: add should-not-trigger queries")
    assert lines[at + 2 : at + 4] == ["  --- a/SKILL.md", "  +++ b/SKILL.md"]
    assert lines[-1].startswith("mutation score 0.9")


def test_min_score_fails_a_weak_suite(runs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    project = runs["weak"][0]
    status, _out, err = _mutate(capsys, project, "-q", "--min-score", "0.5", "--max-mutants", "3")
    assert status == 1
    assert "the mutation score is below --min-score 0.5" in err


def test_a_bad_min_score_is_a_usage_error(runs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    status, _out, err = _mutate(capsys, runs["weak"][0], "--min-score", "2")
    assert status == 2
    assert "command line (--min-score): --skills-mutation-min-score must be a score from 0 to 1," \
        " got 2.0" in err


def test_a_skill_no_scenario_offers_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = mutation_project(tmp_path, "weak")
    (project / "suites" / "weak" / "order.scenario.yaml").unlink()
    status, _out, err = _mutate(capsys, project)
    assert status == 2
    assert f"{SKILL}: no scenario offers this skill" in err
