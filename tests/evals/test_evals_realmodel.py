"""``agent-skills eval`` and scenario recordings against a real OpenAI-compatible server
(llama.cpp's, serving SmolLM2-135M: bench/support/realmodel.py), with no proxy or patch in
between: every run is measured (no error from a request shape), the grader's answers are
parsed, the report is built, and the offline replay rebuilds the same benchmark. What is
asserted is the pipeline, never what a 135M model answers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.support.realmodel import RealModel
from tests.support.evals import run_eval_command

pytestmark = pytest.mark.realmodel
REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "example_suite" / ".claude" / "skills" / "invoice-totals"
#: Seconds a recording from the real model may take: a 135M model on a busy 2-core machine
#: evaluates a prompt of the example's tools and skills in seconds to a minute.
REAL_TIMEOUT = 1800


def _record_then_replay(
    real_model: RealModel, tmp_path: Path, *args: str
) -> tuple[dict[str, Any], dict[str, Any], subprocess.CompletedProcess[str]]:
    # The agent answers without tools: a 135M model offered them calls them turn after turn
    # (the tool-call round trip is tests/harness/test_real_server.py's); one run at a time,
    # so that the server reuses the prompt it evaluated last.
    common = [str(SKILL), "--runtime", "local", "--runs", "2", "--jobs", "1",
              "--model", real_model.model, "--min-pass-rate", "0",
              "--cassettes", str(tmp_path / "cassettes"), *args]  # fmt: skip
    params = real_model.param_flags(tool_choice="none")
    recorded = run_eval_command(
        *common, "--record", "all", "--upstream-url", real_model.base_url,
        *params, "--out", "recorded", cwd=tmp_path, timeout=REAL_TIMEOUT,
    )  # fmt: skip
    # 1: a bar not met (the model's doing, not the pipeline's); 2 or a crash would be ours.
    assert recorded.returncode in (0, 1), recorded.stdout + recorded.stderr
    assert "Traceback" not in recorded.stderr, recorded.stderr
    replayed = run_eval_command(
        *common, *params, "--out", "replayed", cwd=tmp_path
    )
    assert replayed.returncode == recorded.returncode, replayed.stdout + replayed.stderr
    name = "triggers.json" if "--triggers" in args else "benchmark.json"
    first, again = (
        json.loads((tmp_path / out / name).read_text()) for out in ("recorded", "replayed")
    )
    return first, again, recorded


def test_an_eval_recorded_from_a_real_server_measures_every_run_and_replays(
    real_model: RealModel, tmp_path: Path
) -> None:
    recorded, replayed, done = _record_then_replay(real_model, tmp_path, "--eval", "1")
    assert done.returncode == 0  # --min-pass-rate 0: no bar to miss
    runs = recorded["runs"]
    assert len(runs) == 2 * 2  # two configurations, two runs each
    assert [run["error"] for run in runs] == [None] * len(runs), done.stderr
    # Every run talked to the model, and its string expectation was graded by it.
    assert all(run["result"]["tokens"] > 0 for run in runs)
    graded = [
        item for run in runs for item in run["expectations"] if item["text"].startswith("The")
    ]
    assert len(graded) == len(runs) and all(isinstance(item["passed"], bool) for item in graded)
    # The evidence on a real model's answers: each mean's interval, the delta's, a verdict.
    (verdict,) = recorded["evals"]
    assert verdict["verdict"] in ("better", "worse", "inconclusive")
    for name in ("with_skill", "without_skill"):
        assert recorded["run_summary"][name]["pass_rate"]["runs_counted"] == 2
        low, high = verdict["pass_rate"][name]["ci95"]  # 2 graded runs: an interval
        assert 0 <= low <= verdict["pass_rate"][name]["mean"] <= high <= 1
    assert len(verdict["delta_ci95"]) == 2 and isinstance(verdict["runs_for_0_10"], int)
    assert f"| {verdict['verdict']} |" in (tmp_path / "recorded" / "benchmark.md").read_text()
    # llama-cpp-python's server refuses a JSON schema: negotiated, named, noted.
    assert recorded["metadata"]["grader_output"] == "json_object"
    assert any("refused response_format json_schema" in note for note in recorded["notes"])
    assert "<dt>grader output</dt><dd>json_object</dd>" in (
        tmp_path / "recorded" / "report.html"
    ).read_text()
    recorded["metadata"]["timestamp"] = replayed["metadata"]["timestamp"] = None
    assert replayed == recorded


def test_trigger_queries_recorded_from_a_real_server_replay_the_same(
    real_model: RealModel, tmp_path: Path
) -> None:
    recorded, replayed, _ = _record_then_replay(real_model, tmp_path, "--triggers")
    results = recorded["results"]
    assert [result["errors"] for result in results] == [0] * len(results)
    assert all(result["runs"] == 2 for result in results)
    assert replayed == recorded


SCENARIO = """\
name: invoice totals from a real model
skills: [../skills]
inputs:
  march.csv: "customer,item,quantity,unit_price\\nacme,bolts,10,0.5\\n"
user: "What does each customer owe in march.csv?"
max_turns: 3
model:
  cassette: cassettes/totals.json
"""


def test_a_scenario_recorded_from_a_real_server_replays_offline(
    real_model: RealModel, tmp_path: Path
) -> None:
    skill = tmp_path / "skills" / SKILL.name
    shutil.copytree(SKILL, skill, ignore=shutil.ignore_patterns("evals"))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "totals.scenario.yaml").write_text(SCENARIO)
    options = ["-p", "no:cacheprovider", "-o", "skills_validate=false",
               "-o", "skills_runtime=local", f"--skills-model={real_model.model}",
               *real_model.param_flags("--skills-", tool_choice="none")]  # fmt: skip

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "tests", "-q", *options, *args],
            cwd=tmp_path, capture_output=True, text=True, timeout=REAL_TIMEOUT,
        )  # fmt: skip

    recorded = pytest_run("--skills-record=once", f"--skills-upstream-url={real_model.base_url}")
    cassette = tmp_path / "tests" / "cassettes" / "totals.json"
    assert cassette.is_file(), recorded.stdout + recorded.stderr
    interactions = json.loads(cassette.read_text())["interactions"]
    assert interactions and all(item["response"]["status"] == 200 for item in interactions)
    replayed = pytest_run()  # --skills-record none: from the cassette alone
    assert replayed.returncode == recorded.returncode, replayed.stdout
    assert replayed.stdout.splitlines()[-1].split(" in ")[0] == (
        recorded.stdout.splitlines()[-1].split(" in ")[0]
    )
