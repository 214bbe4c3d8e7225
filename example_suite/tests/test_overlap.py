"""overlap/: three skills whose descriptions overlap on purpose. Their trigger matrix and the
description loop replay from overlap/eval-cassettes/ (docs/evals.md, "From a misfiring
description to a better one"), through the `agent-skills` command."""

import json
from pathlib import Path

import pytest

from pytest_agent_skills.cli import main

OVERLAP = Path(__file__).resolve().parent.parent / "overlap"


@pytest.fixture(autouse=True, scope="module")
def isolated_runtime() -> None:
    """The model's commands run isolated (the sandbox, else Docker): on a machine with neither,
    these replays skip with the reason, as the eval items do (skills_runtime_missing = skip)."""
    from pytest_agent_skills.evals.setup.eval_runtime import EvalRuntimeError, choose_runtime
    from pytest_agent_skills.workspace import create_runtime

    try:
        choose_runtime(None, create_runtime).close()
    except EvalRuntimeError as error:
        pytest.skip(str(error))


@pytest.fixture(autouse=True)
def in_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    # overlap/pyproject.toml names the model and the cassettes the recordings were made with.
    monkeypatch.chdir(OVERLAP)


def test_the_matrix_shows_expense_report_misfiring(tmp_path: Path) -> None:
    assert main(["triggers", "skills", "--out", str(tmp_path), "-q"]) == 1
    matrix = json.loads((tmp_path / "triggers-matrix.json").read_text())
    assert list(matrix["summary"]["below_bar"]) == ["expense-report"]
    assert matrix["per_skill"]["expense-report"]["recall"] < 0.5
    worst = matrix["collisions"][0]
    assert {worst["a"], worst["b"]} == {"expense-report", "invoice-check"}


def test_a_better_description_is_found_on_held_out_queries(tmp_path: Path) -> None:
    assert main(["improve-description", "skills/expense-report", "--out", str(tmp_path), "-q"]) == 0
    found = json.loads((tmp_path / "description-candidates.json").read_text())
    original, best = found["candidates"][0], found["candidates"][found["best_iteration"]]
    assert best["test"]["passed"] > original["test"]["passed"]
    assert found["best"] != found["original"]
