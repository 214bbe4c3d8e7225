"""The GitHub Action (``action.yml``): its steps run as the runner runs them (tests/support/
actions.py) on a fixture git repository pass on good skills and fail on a broken one, with the
SARIF file (handed to the upload step) and the Markdown job summary written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.actions import ActionRun, run_action
from tests.support.git_repos import commit_all, skills_repository

pytestmark = pytest.mark.usefixtures("clean_settings_env")

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The package is this checkout, imported through PYTHONPATH: no install step.
INPUTS = {"install": "false"}


def _run(tmp_path: Path, workspace: Path, **inputs: str) -> ActionRun:
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    return run_action(REPO_ROOT, workspace, {**INPUTS, **inputs}, runner_temp)


def _sarif_results(run: ActionRun) -> list[dict[str, object]]:
    upload = run.step("Upload SARIF")
    assert upload.ran and upload.uses == "github/codeql-action/upload-sarif@v3"
    document = json.loads(Path(upload.with_["sarif_file"]).read_text(encoding="utf-8"))
    assert document["version"] == "2.1.0"
    results: list[dict[str, object]] = document["runs"][0]["results"]
    return results


def test_the_action_passes_on_good_skills_with_sarif_and_a_summary(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    skills_repository(repository, 3)

    run = _run(tmp_path, repository)

    assert not run.failed, [(step.name, step.stderr) for step in run.steps]
    assert [step.name for step in run.steps if not step.ran] == [
        "Set up Python", "Install pytest-agent-skills"
    ]
    gate = run.step("Check the skills")
    assert gate.outputs["exit-code"] == "0"
    assert gate.outputs["findings"] == "0"
    assert gate.outputs["coverage"] == "0.0000"
    assert int(gate.outputs["tokens-listing"]) > 0
    assert _sarif_results(run) == []
    summary = (tmp_path / "runner-temp" / "step_summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## Agent Skills: passed\n")
    assert "| validate | pass | 3 skill(s): 0 error(s), 0 warning(s) |" in summary
    assert "| coverage | pass | 0 of 3 skill(s) covered (0%; gate 0%)" in summary
    assert "| tokens | pass | listing " in summary


def test_the_action_fails_on_a_broken_skill_after_uploading_its_finding(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    folders = skills_repository(repository, 3)
    (folders[1] / "SKILL.md").write_text("---\nname: [\n---\nbody\n", encoding="utf-8")
    commit_all(repository, "break one")

    run = _run(tmp_path, repository)

    assert run.failed
    assert run.step("Check the skills").status == 0  # the verdict comes after the upload
    assert run.step("Verdict").status == 1
    (result,) = _sarif_results(run)
    assert result["ruleId"] == "frontmatter-yaml"
    location = result["locations"][0]["physicalLocation"]  # type: ignore[index]
    assert location["artifactLocation"]["uri"] == "skills/skill-001/SKILL.md"
    summary = (tmp_path / "runner-temp" / "step_summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## Agent Skills: failed\n")
    assert "| validate | **FAIL** | 3 skill(s): 1 error(s), 0 warning(s) |" in summary
    line = result["locations"][0]["physicalLocation"]["region"]["startLine"]  # type: ignore[index]
    assert f"`skills/skill-001/SKILL.md:{line}` error [frontmatter-yaml]" in summary


def test_changed_only_checks_the_changed_skills_and_pytest_runs_on_them(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    folders = skills_repository(repository, 5)
    (folders[0] / "SKILL.md").write_text("---\nname: [\n---\nbody\n", encoding="utf-8")
    commit_all(repository, "broken before")
    with (folders[3] / "SKILL.md").open("a", encoding="utf-8") as changed:
        changed.write("One more step.\n")
    commit_all(repository, "one change")

    run = _run(
        tmp_path, repository, **{"changed-only": "true", "base-ref": "HEAD~1"},
        checks="validate,pytest", **{"min-coverage": "0.5"},
    )

    assert not run.failed, run.step("Check the skills").stderr
    summary = (tmp_path / "runner-temp" / "step_summary.md").read_text(encoding="utf-8")
    assert "Only what changed: 1 skill(s) changed since HEAD~1" in summary
    assert "4 unchanged left out" in summary
    assert "| validate | pass | 1 skill(s): 0 error(s), 0 warning(s) |" in summary
    assert "| pytest | pass | `pytest -q --skills-changed-since HEAD~1` exited 0 |" in summary


def test_a_bad_input_fails_the_step_with_the_reason(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    skills_repository(repository, 1)

    run = _run(tmp_path, repository, **{"fail-on": "sometimes"})

    gate = run.step("Check the skills")
    assert gate.status == 2
    assert "input fail-on: 'sometimes' is not one of error, warning, never" in gate.stderr
    assert not run.step("Upload SARIF").ran  # no SARIF file was written
