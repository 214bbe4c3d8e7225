"""README command 1's job: the plugin over example_suite/ passes in every runtime, and the
output shows what was validated, run and replayed, and the coverage summary."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.evals import no_isolation
from tests.support.workspace import RUNTIME_PARAMS, get_runtime

EXAMPLE_SUITE = Path(__file__).resolve().parents[2] / "example_suite"


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    """A copy, so that the run leaves nothing (caches, expected files) in the repository."""
    return Path(shutil.copytree(EXAMPLE_SUITE, tmp_path / "example_suite", symlinks=True))


@pytest.mark.parametrize("runtime", RUNTIME_PARAMS)
def test_the_example_suite_passes_in_every_runtime(
    runtime: str, suite_copy: Path, tmp_path: Path
) -> None:
    get_runtime(runtime, tmp_path / "probe")  # skips (fails in CI) when the engine is missing
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-v",
            f"--skills-runtime={runtime}",
            f"--skills-eval-runtime={runtime}",
        ],
        cwd=suite_copy,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout
    assert completed.returncode == 0, output + completed.stderr
    for expected in (
        "agent-skills: skills_roots=[.claude/skills], skills_profile=trpc,"
        f" skills_runtime={runtime}, skills_runtime_missing=skip, skills_record=none,",
        f"skills_eval_runtime={runtime}",
        ".claude/skills/invoice-totals/SKILL.md::validate PASSED",
        ".claude/skills/meeting-notes/SKILL.md::validate PASSED",
        "tests/test_invoice_totals.py::test_totals_per_customer PASSED",
        "tests/test_agent.py::test_the_recorded_agent_totals_the_invoices PASSED",
        ".claude/skills/invoice-totals/evals/totals.scenario.yaml::totals for two customers PASSED",
        ".claude/skills/invoice-totals/evals/evals.json::eval 1: total of one customer PASSED",
        ".claude/skills/invoice-totals/evals/triggers.json::triggers PASSED",
        "cassettes: 0 recorded (0 interactions), 1 replayed (4 interactions),"
        " 0 unused interaction(s)",
        "invoice-totals: loaded by 2 of the 4 scenario(s) that offered it",
        " passed in ",
    ):
        assert expected in output, f"{expected!r} not in the output:\n{output}"
    assert " failed" not in output and "skipped" not in output


def test_the_broken_examples_fail_with_rule_ids_and_lines(suite_copy: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "broken"],
        cwd=suite_copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 1
    for expected in (
        "broken/Bad_Name/SKILL.md:2: error [name-charset]",
        "broken/Bad_Name/SKILL.md:4: error [field-unknown]",
        "broken/Bad_Name/SKILL.md:7: error [reference-missing]",
        "broken/no-front-matter/SKILL.md:1: error [frontmatter-missing]",
        "broken/tools-trouble/SKILL.md:7: error [tools-not-identifier]",
    ):
        assert expected in completed.stdout, f"{expected!r} not in:\n{completed.stdout}"


def test_without_sandbox_or_docker_the_example_suite_skips_its_evals(
    suite_copy: Path, tmp_path: Path
) -> None:
    """On a machine with neither bubblewrap nor Docker, the evals (the model's commands) are
    skipped with the reason; the rest runs on the local runtime and passes."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider"],
        cwd=suite_copy,
        env=no_isolation(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout
    assert completed.returncode == 0, output + completed.stderr
    assert "evals.json::eval 1: total of one customer SKIPPED" in output
    assert "triggers.json::triggers SKIPPED" in output
    assert "tests/test_overlap.py::test_the_matrix_shows_expense_report_misfiring SKIPPED" in output
    assert "no isolated runtime for the commands the model chooses" in output
    scenario = ".claude/skills/invoice-totals/evals/totals.scenario.yaml::totals for two customers"
    assert f"{scenario} PASSED" in output
    assert " failed" not in output
