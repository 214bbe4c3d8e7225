"""An offered skill whose front matter is invalid stops the eval, the trigger runs, the trigger
matrix and the description loop before any request, naming the file, the line and the validate
rule; ``allow_invalid_skills`` goes on and says what the model will see of it."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_agent_skills.evals.setup.offered import InvalidOfferedSkillError
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark, run_triggers
from pytest_agent_skills.evals.triggers.improve import ImproveRequest, improve_description
from pytest_agent_skills.evals.triggers.matrix import MatrixRequest, run_matrix
from pytest_agent_skills.rules import validate_check
from pytest_agent_skills.skill import Skill
from tests.support.cli import cli
from tests.support.evals import fake_endpoint, recording, write_eval_skill
from tests.support.skill_files import write_skill

BROKEN = "name: broken\ndescription: [never closed\n"


def _with_a_broken_sibling(tmp_path: Path) -> Path:
    skill_dir = write_eval_skill(tmp_path)
    write_skill(tmp_path / "skills", "broken", front=BROKEN)
    return skill_dir


def _expected_message(broken: Path) -> str:
    """The message's start: the finding validate makes of the broken skill, as it formats it."""
    (finding,) = validate_check(Skill.load(broken.parent), "frontmatter")
    assert finding.rule == "frontmatter-yaml"
    return f"1 offered skill(s) with invalid front matter, no request made:\n  {finding.format()}"


@pytest.mark.parametrize("start", ["eval", "triggers", "matrix", "improve"])
def test_an_invalid_offered_skill_stops_the_run_before_any_request(
    tmp_path: Path, start: str
) -> None:
    skill_dir = _with_a_broken_sibling(tmp_path)
    broken = tmp_path / "skills" / "broken" / "SKILL.md"

    with fake_endpoint() as (endpoint, url):
        options = recording(url, tmp_path)
        with pytest.raises(InvalidOfferedSkillError) as raised:
            if start == "eval":
                run_benchmark(EvalRequest(skill_dir, options))
            elif start == "triggers":
                run_triggers(EvalRequest(skill_dir, options))
            elif start == "matrix":
                run_matrix(MatrixRequest((tmp_path / "skills",), options))
            else:
                improve_description(ImproveRequest(skill_dir, options, iterations=1))

    assert endpoint.requests == 0
    message = str(raised.value)
    assert message.startswith(_expected_message(broken))
    assert message.endswith(
        "fix them ('agent-skills validate' shows every finding), or go on with"
        " --allow-invalid-skills (skills_eval_allow_invalid) to offer them as they read"
    )


def test_allowed_the_run_goes_on_and_says_what_the_model_sees(tmp_path: Path) -> None:
    skill_dir = _with_a_broken_sibling(tmp_path)
    progress = io.StringIO()

    with fake_endpoint() as (endpoint, url):
        options = replace(recording(url, tmp_path), allow_invalid_skills=True, runs=1)
        outcome = run_triggers(EvalRequest(skill_dir, options, progress=progress))

    assert endpoint.requests > 0
    assert outcome.document.summary is not None and outcome.document.summary.total == 2
    assert (
        f"warning: {tmp_path / 'skills' / 'broken' / 'SKILL.md'} has invalid front matter;"
        " offered anyway (--allow-invalid-skills): the model sees the name 'broken' and the"
        " description ''\n"
    ) in progress.getvalue()


def test_the_triggers_command_names_the_file_line_and_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_a_broken_sibling(tmp_path)
    monkeypatch.chdir(tmp_path)

    status, _out, err = cli(capsys, "triggers", "--dry-run", "skills")

    assert status == 2
    assert "error: " + _expected_message(Path("skills/broken/SKILL.md")) in err

    status, _out, err = cli(capsys, "triggers", "--dry-run", "--allow-invalid-skills", "skills")
    assert status == 0
    assert "the model sees the name 'broken' and the description ''" in err
