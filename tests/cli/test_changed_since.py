"""``--changed-since REF``: only the skills with a file that differs from a git ref are checked
(``agent-skills validate`` and the pytest option), how many were left out is said, and a
change that reaches every skill's trigger runs is told apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agent_skills.changes import changed_skills
from tests.support.cli import validate_process
from tests.support.git_repos import commit_all, git, skills_repository
from tests.support.pytester_runs import run

pytestmark = pytest.mark.usefixtures("clean_settings_env")


def _checked(stdout: bytes) -> list[str]:
    return [Path(skill["path"]).name for skill in json.loads(stdout)["skills"]]


def test_of_200_skills_with_one_changed_validate_checks_that_one(tmp_path: Path) -> None:
    folders = skills_repository(tmp_path, 200)
    with (folders[7] / "SKILL.md").open("a", encoding="utf-8") as skill_file:
        skill_file.write("One more step.\n")
    commit_all(tmp_path, "one skill changed")

    done = validate_process("--changed-since", "HEAD~1", "--format", "json", "skills", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert _checked(done.stdout) == ["skill-007"]
    commit = git(tmp_path, "rev-parse", "--short=7", "HEAD~1").strip()
    assert done.stderr.decode() == (
        f"agent-skills: 1 skill(s) changed since HEAD~1 ({commit}), 199 unchanged left out\n"
    )


def test_staged_unstaged_and_untracked_changes_count(tmp_path: Path) -> None:
    folders = skills_repository(tmp_path, 5)
    (folders[1] / "docs").mkdir()
    (folders[1] / "docs" / "new.md").write_text("untracked\n", encoding="utf-8")
    (folders[2] / "SKILL.md").write_text(
        (folders[2] / "SKILL.md").read_text(encoding="utf-8") + "staged\n", encoding="utf-8"
    )
    git(tmp_path, "add", str(folders[2] / "SKILL.md"))
    (folders[3] / "SKILL.md").write_text(
        (folders[3] / "SKILL.md").read_text(encoding="utf-8") + "unstaged\n", encoding="utf-8"
    )

    done = validate_process("--changed-since", "HEAD", "--format", "json", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert sorted(_checked(done.stdout)) == ["skill-001", "skill-002", "skill-003"]
    assert b"3 skill(s) changed since HEAD" in done.stderr
    assert b"2 unchanged left out" in done.stderr


def test_a_broken_changed_skill_fails_and_a_broken_unchanged_one_is_left_out(
    tmp_path: Path,
) -> None:
    folders = skills_repository(tmp_path, 3)
    (folders[0] / "SKILL.md").write_text("---\nname: [\n---\nbody\n", encoding="utf-8")
    commit_all(tmp_path, "broken")
    (folders[1] / "SKILL.md").write_text("no front matter\n", encoding="utf-8")

    done = validate_process("--changed-since", "HEAD", cwd=tmp_path)

    assert done.returncode == 1
    assert b"skill-001" in done.stdout
    assert b"skill-000" not in done.stdout


def test_no_skill_changed_checks_none_and_passes(tmp_path: Path) -> None:
    skills_repository(tmp_path, 3)

    done = validate_process("--changed-since", "HEAD", "--format", "sarif", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"][0]["results"] == []
    assert b"0 skill(s) changed since HEAD" in done.stderr


def test_outside_a_git_repository_is_a_clear_error(tmp_path: Path) -> None:
    from tests.support.skill_files import write_skill

    write_skill(tmp_path / "skills")

    done = validate_process("--changed-since", "HEAD~1", "skills", cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr.decode().endswith(
        "error: --changed-since HEAD~1: skills/csv-summary is not inside a"
        " git repository (run it in a clone of the repository, or leave the option out)\n"
    )


def test_an_unknown_ref_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    skills_repository(tmp_path, 1)

    done = validate_process("--changed-since", "HEAD~5", cwd=tmp_path)

    assert done.returncode == 2
    assert (
        f"error: --changed-since HEAD~5: unknown git ref 'HEAD~5' in {tmp_path}; give a commit,"
        " branch or tag this clone has (a shallow clone, such as actions/checkout's default,"
        " has no history: fetch it with fetch-depth: 0)\n"
    ) in done.stderr.decode()


def test_a_changed_description_reaches_every_skill_a_body_does_not(tmp_path: Path) -> None:
    folders = skills_repository(tmp_path, 4)
    body_only = folders[0] / "SKILL.md"
    body_only.write_text(body_only.read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    commit_all(tmp_path, "body")

    split = changed_skills(folders, "HEAD~1", tmp_path, "--changed-since HEAD~1")
    assert split.changed == (folders[0],)
    assert not split.reaches_all
    assert split.reach() == ""

    described = folders[2] / "SKILL.md"
    described.write_text(
        described.read_text(encoding="utf-8").replace("Summarises", "Sums up"), encoding="utf-8"
    )
    split = changed_skills(folders, "HEAD~1", tmp_path, "--changed-since HEAD~1")
    assert split.changed == (folders[0], folders[2])
    assert split.listed == (folders[2],)
    assert split.reach() == (
        "the skills offered to the model changed, so every skill's trigger runs are included:"
        " skills/skill-002: name or description changed"
    )


def test_a_removed_skill_reaches_every_skill(tmp_path: Path) -> None:
    folders = skills_repository(tmp_path, 3)
    git(tmp_path, "rm", "-q", "-r", str(folders[1]))

    split = changed_skills([folders[0], folders[2]], "HEAD", tmp_path, "--changed-since HEAD")

    assert split.changed == ()
    assert split.removed == ("skills/skill-001/SKILL.md",)
    assert split.reaches_all


def test_the_pytest_option_deselects_the_unchanged_skills(
    pytester: pytest.Pytester,
) -> None:
    folders = skills_repository(pytester.path, 20)
    (folders[4] / "SKILL.md").write_text("no front matter\n", encoding="utf-8")

    result = run(pytester, "--skills-changed-since", "HEAD", "skills")

    result.assert_outcomes(failed=1, deselected=19)
    commit = git(pytester.path, "rev-parse", "--short=7", "HEAD").strip()
    result.stdout.fnmatch_lines(
        [f"agent-skills: 1 skill(s) changed since HEAD ({commit}), 19 unchanged left out"]
    )


def test_the_pytest_option_with_an_unknown_ref_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    skills_repository(pytester.path, 2)

    result = run(pytester, "--skills-changed-since", "no-such-branch", "skills")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--skills-changed-since no-such-branch: unknown git ref*"])


def test_audit_takes_the_changed_skills_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.cli import cli

    folders = skills_repository(tmp_path, 4)
    (folders[2] / "notes.md").write_text("More notes.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    status, out, err = cli(capsys, "audit", "--changed-since", "HEAD", "--format", "json")

    assert status == 0
    assert [skill["name"] for skill in json.loads(out)["skills"]] == ["skill-002"]
    assert "1 skill(s) changed since HEAD" in err
    assert "3 unchanged left out" in err


def test_the_trigger_matrix_runs_whole_when_a_description_changed_and_not_for_a_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.cli import cli

    folders = skills_repository(tmp_path, 200)
    for folder in folders[:2]:
        (folder / "evals").mkdir()
        (folder / "evals" / "triggers.json").write_text(
            json.dumps([{"query": f"summarise {folder.name}", "should_trigger": True}]),
            encoding="utf-8",
        )
    commit_all(tmp_path, "trigger queries")
    body_only = folders[50] / "SKILL.md"
    body_only.write_text(body_only.read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    status, out, err = cli(capsys, "triggers", "--dry-run", "--changed-since", "HEAD", "skills")

    assert (status, out) == (0, "")
    assert "1 skill(s) changed since HEAD" in err and "199 unchanged left out" in err
    assert "the trigger matrix is not run" in err

    described = folders[120] / "SKILL.md"
    described.write_text(
        described.read_text(encoding="utf-8").replace("Summarises", "Condenses"), encoding="utf-8"
    )
    status, out, err = cli(capsys, "triggers", "--dry-run", "--changed-since", "HEAD", "skills")

    assert status == 0
    assert (
        "agent-skills: the skills offered to the model changed, so every skill's trigger runs"
        " are included: skills/skill-120: name or description changed"
    ) in err
    planned = [line for line in out.splitlines() if "summarise skill-00" in line]
    assert len(planned) == 2 * 3  # both skills' queries, three runs each, 200 skills offered


def test_eval_runs_nothing_for_an_unchanged_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.cli import cli

    skills_repository(tmp_path, 2)
    monkeypatch.chdir(tmp_path)

    status, out, err = cli(capsys, "eval", "--changed-since", "HEAD", "skills/skill-001")

    assert status == 0
    assert out == "skills/skill-001: unchanged since HEAD: no eval run\n"
    assert "0 skill(s) changed since HEAD" in err
