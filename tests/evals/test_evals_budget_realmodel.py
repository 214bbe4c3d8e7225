"""Budgets against a real OpenAI-compatible server (llama.cpp's, serving SmolLM2-135M:
bench/support/realmodel.py): a small model offered tools calls them turn after turn, and the
turn limit ends each such run as a failed run, graded, never as an error; the eval's token
budget leaves the runs after it unstarted. What is asserted is the pipeline, never what a
135M model answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.support.realmodel import RealModel
from tests.support.evals import run_eval_command

pytestmark = pytest.mark.realmodel
SKILL = (
    Path(__file__).resolve().parents[2] / "example_suite" / ".claude" / "skills" / "invoice-totals"
)


def test_a_real_model_stopped_by_the_turn_limit_is_a_failed_run_and_the_budget_skips_runs(
    real_model: RealModel, tmp_path: Path
) -> None:
    done = run_eval_command(
        str(SKILL), "--runtime", "local", "--eval", "1", "--runs", "2", "--jobs", "1",
        "--model", real_model.model, "--min-pass-rate", "0", "--max-turns", "2",
        "--max-tokens", "1", "--record", "all", "--upstream-url", real_model.base_url,
        "--cassettes", str(tmp_path / "cassettes"),
        *real_model.param_flags(tool_choice="auto"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    document = json.loads((tmp_path / "evals-out" / "benchmark.json").read_text())
    runs = document["runs"]
    assert len(runs) == 4
    # The budget of 1 token is spent by the first run: it is measured, the rest never start.
    first, *rest = runs
    assert not first["skipped"] and all(run["skipped"] for run in rest)
    assert all(run["result"]["stop_reason"] == "budget" for run in rest)
    assert document["metadata"]["runs_skipped"] == 3
    assert "3 of 4 runs were never started: the token budget (--max-tokens) was spent" in (
        done.stdout
    )
    # Offered the tools, the model calls them turn after turn: the turn limit stops it, a
    # failed run graded on what it did, not an error.
    assert first["error"] is None, first["error"]
    assert first["result"]["stop_reason"] == "turn_limit"
    assert first["result"]["tool_calls"] == 2
    assert first["result"]["tokens"] > 0
