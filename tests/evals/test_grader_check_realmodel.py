"""The real llama.cpp server (SmolLM2-135M, bench/support/realmodel.py) as the grader: its
figures on the gold set recorded and replayed offline, and the unsupported passes it gives on
example_suite's invoice-totals counted. What is asserted is the pipeline and the arithmetic of
the figures, never what a 135M model answers; the figures measured are printed (``-s``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.support.realmodel import GRADER_PARAMS, RealModel
from pytest_agent_skills.evals.suite.grader_check import GraderCheck, load_gold
from tests.support.evals import run_eval_command

pytestmark = pytest.mark.realmodel
REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "example_suite" / ".claude" / "skills" / "invoice-totals"
#: Seconds a recording from the real model may take on a busy 2-core machine.
REAL_TIMEOUT = 2400


def _grader_flags() -> list[str]:
    return [f"--grader-param={name}={json.dumps(value)}" for name, value in GRADER_PARAMS.items()]


def test_grader_check_of_the_real_server_is_recorded_and_replayed(
    real_model: RealModel, tmp_path: Path
) -> None:
    common = ["--grader-model", real_model.model, "--jobs", "1", "--format", "json", "-q",
              *_grader_flags()]  # fmt: skip
    recorded = run_eval_command(
        *common, "--record", "all", "--upstream-url", real_model.base_url, cwd=tmp_path,
        command="grader-check", timeout=REAL_TIMEOUT,
    )  # fmt: skip
    assert recorded.returncode in (0, 1), recorded.stdout + recorded.stderr
    replayed = run_eval_command(*common, cwd=tmp_path, command="grader-check")
    assert replayed.returncode == recorded.returncode, replayed.stderr
    assert replayed.stdout == recorded.stdout
    check = GraderCheck.model_validate_json(recorded.stdout)
    gold = load_gold().cases
    assert check.items == len(gold) == len(check.cases)
    # The figures are those of the verdicts listed.
    must_fail = [case for case in check.cases if not case.truth]
    passed = sum(case.passed for case in must_fail)
    assert check.false_pass_rate == round(passed / len(must_fail), 4)
    assert check.accuracy == round(sum(case.correct for case in check.cases) / len(gold), 4)
    assert recorded.returncode == (0 if check.false_pass_rate <= 0.1 else 1)
    print("\nreal-model grader-check:", json.dumps(check.figures()))


def test_the_unsupported_passes_of_the_real_server_on_invoice_totals_are_counted(
    real_model: RealModel, tmp_path: Path
) -> None:
    # As a new user tried it: the model is agent and grader, offered the tools.
    common = [str(SKILL), "--runtime", "local", "--runs", "2", "--jobs", "1", "--eval", "1",
              "--model", real_model.model, "--min-pass-rate", "0", "--max-turns", "4",
              "--cassettes", str(tmp_path / "cassettes"), *real_model.param_flags()]  # fmt: skip
    recorded = run_eval_command(
        *common, "--record", "all", "--upstream-url", real_model.base_url, "--out", "recorded",
        cwd=tmp_path, timeout=REAL_TIMEOUT,
    )  # fmt: skip
    assert recorded.returncode in (0, 1), recorded.stdout + recorded.stderr
    assert (
        "warning: Judge and agent are not apart: the grader 'smollm2-135m-instruct' is the"
        " agent's own model"
    ) in recorded.stderr
    replayed = run_eval_command(*common, "--out", "replayed", cwd=tmp_path)
    assert replayed.returncode == recorded.returncode, replayed.stderr
    first, again = (
        json.loads((tmp_path / out / "benchmark.json").read_text())
        for out in ("recorded", "replayed")
    )
    first["metadata"]["timestamp"] = again["metadata"]["timestamp"] = None
    assert again == first
    unsupported = {
        name: sum(
            item["supported"] is False
            for run in first["runs"]
            if run["configuration"] == name
            for item in run["expectations"]
        )
        for name in ("with_skill", "without_skill")
    }
    for name, count in unsupported.items():
        assert first["run_summary"][name]["unsupported_passes"] == count
    assert first["metadata"]["same_grader"] == (
        "the grader 'smollm2-135m-instruct' is the agent's own model"
    )
    print("\nreal-model invoice-totals unsupported passes:", json.dumps(unsupported))
    for run in first["runs"]:
        for item in run["expectations"]:
            print(run["configuration"], run["run_number"], item["passed"], item["supported"],
                  json.dumps(item["quotes"]), repr(item["evidence"][:200]))  # fmt: skip
