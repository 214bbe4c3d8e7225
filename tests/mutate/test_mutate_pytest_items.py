"""``skills_mutation_min_score``: a ``mutation`` item per collected skill, failing below the
score with the survivors and their diffs; nothing added when the option is unset."""

from __future__ import annotations

import pytest

from tests.support.mutation import SKILL, mutation_project
from tests.support.pytester_runs import run

pytestmark = pytest.mark.usefixtures("clean_settings_env")


def _project(pytester: pytest.Pytester, suite: str) -> None:
    mutation_project(pytester.path, suite)
    (pytester.path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\nskills_mutation_min_score = 0.5\n"
        "skills_mutation_max_mutants = 6\nskills_mutation_jobs = 2\n",
        encoding="utf-8",
    )


def test_a_weak_suite_fails_its_mutation_item_with_the_survivors(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "weak")
    result = run(pytester, f"{SKILL}/SKILL.md", "-k", "mutation")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([
        "*mutation score below *pyproject.toml: skills_mutation_min_score 0.5:",
        "*6 SURVIVED (no check noticed):",
        "*M01 broadened-description SKILL.md:3 survived",
        "*  --- a/SKILL.md",
        "*mutation score 0.00: 0 killed, 6 survived, 0 error(s)/timeout(s) of 6 mutants",
        # pytest 9 adds " - <the message's first line>" to the summary line; 8.4 does not.
        f"FAILED {SKILL}/SKILL.md::mutation*",
    ])


def test_a_strong_suite_passes_its_mutation_item(pytester: pytest.Pytester) -> None:
    _project(pytester, "strong")
    result = run(pytester, f"{SKILL}/SKILL.md", "-k", "mutation", "-v")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines([f"{SKILL}/SKILL.md::mutation PASSED*"])


def test_no_mutation_item_without_the_option(pytester: pytest.Pytester) -> None:
    mutation_project(pytester.path, "weak")
    result = run(pytester, f"{SKILL}/SKILL.md", "--collect-only", "-q")
    assert "mutation" not in result.stdout.str()
