"""The run of mutants: a mutant that breaks the tooling itself (a SKILL.md that no longer
reads) is an ``error`` naming why, not a kill; the original's failing checks are left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agent_skills.config.runtimes import RuntimeOptions
from pytest_agent_skills.harness.run_settings import RunSettings
from pytest_agent_skills.mutate.checks import ScenarioSuite, scenario_checks
from pytest_agent_skills.mutate.mutant import Mutant, unified_diff
from pytest_agent_skills.mutate.runner import RunLimits, run_mutation
from tests.support.mutation import SKILL, mutation_project


def test_a_mutant_whose_skill_no_longer_reads_is_an_error(tmp_path: Path) -> None:
    project = mutation_project(tmp_path, "weak")
    skill_dir = project / SKILL
    before = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    broken = before.replace("---\nname:", "---\nname: [unclosed\nname:", 1)
    diff = unified_diff("SKILL.md", before, broken)
    mutant = Mutant("M01", "by-hand", "SKILL.md", 2, broken, diff)
    suite = ScenarioSuite(
        skill_dir, scenario_checks(skill_dir, project, []), RunSettings(), RuntimeOptions()
    )
    run = run_mutation(skill_dir, suite, [mutant], RunLimits())
    [verdict] = run.verdicts
    assert verdict.status == "error"
    assert verdict.detail is not None
    assert verdict.detail.startswith("the skill no longer reads: [")
    assert run.original == (None,)
    assert (skill_dir / "SKILL.md").read_text(encoding="utf-8") == before


def test_a_check_failing_on_the_original_is_left_out(tmp_path: Path) -> None:
    project = mutation_project(tmp_path, "weak")
    scenario = project / "suites" / "weak" / "order.scenario.yaml"
    text = scenario.read_text(encoding="utf-8")
    scenario.write_text(text + "  final: {contains: never said}\n", encoding="utf-8")
    skill_dir = project / SKILL
    suite = ScenarioSuite(
        skill_dir, scenario_checks(skill_dir, project, []), RunSettings(), RuntimeOptions()
    )
    run = run_mutation(skill_dir, suite, [], RunLimits())
    [failure] = run.original
    assert failure is not None
    assert failure.check == "suites/weak/order.scenario.yaml:3 an order is totalled"
    assert failure.why.startswith("ExpectationError: ")
    assert run.passing == []


@pytest.fixture(autouse=True)
def _no_settings(clean_settings_env: None) -> None:
    """No SKILLS_* variable of the caller reaches the runs."""
