"""``agent-skills eval --regrade`` on the example suite's recorded evals: the conversations
replay from their cassettes (not one agent request, counted), the grader is asked again and
recorded apart (``regrade/``), the originals stay as they were, and an offline regrade
rebuilds the same benchmark. A changed string expectation is a grader cassette miss that says
a regrade suffices."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.evals import fake_endpoint

REPO = Path(__file__).resolve().parents[2]
SKILL = ".claude/skills/invoice-totals"


def _eval(suite: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "eval", SKILL, "-q", "--runtime", "local",
         *args],
        cwd=suite, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _benchmark(folder: Path) -> dict[str, Any]:
    document = json.loads((folder / "benchmark.json").read_text())
    document["metadata"]["timestamp"] = None
    return document


def test_a_regrade_sends_no_agent_request_and_replays_offline(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(REPO / "example_suite", suite)
    cassettes = suite / "eval-cassettes" / "invoice-totals"
    originals = _tree(cassettes)
    replayed = _eval(suite, "--out", "replayed", "--min-pass-rate", "0")
    assert replayed.returncode == 0, replayed.stderr
    recorded = _benchmark(suite / "replayed")

    with fake_endpoint() as (endpoint, url):
        regraded = _eval(suite, "--regrade", "--record", "all", "--upstream-url", url,
                         "--grader-model", "another-grader", "--out", "regraded",
                         "--min-pass-rate", "0")  # fmt: skip
    assert regraded.returncode == 0, regraded.stderr
    document = _benchmark(suite / "regraded")
    graded_runs = [run for run in recorded["runs"] if not run["error"]]
    # Every request was the grader's: one per run with a string expectation, none the agent's.
    assert endpoint.requests == endpoint.grader_requests == len(graded_runs) > 0
    assert document["metadata"]["regraded"] is True
    assert document["metadata"]["grader_model"] == "another-grader"
    # The conversations are the recorded ones: the same runs, tool calls and code checks.
    assert [
        (run["eval_id"], run["configuration"], run["run_number"], run["result"]["tool_calls"],
         run["result"]["tokens"], run["result"]["time_seconds"]) for run in document["runs"]
    ] == [
        (run["eval_id"], run["configuration"], run["run_number"], run["result"]["tool_calls"],
         run["result"]["tokens"], run["result"]["time_seconds"]) for run in recorded["runs"]
    ]  # fmt: skip
    for new, old in zip(document["runs"], recorded["runs"], strict=True):
        for item, before in zip(new["expectations"], old["expectations"], strict=True):
            if item["text"].startswith("{"):  # checked by code: unchanged
                assert item == before
    # The new grader's exchanges are apart; the originals are untouched.
    assert _tree(cassettes) == {**originals, **{
        name: digest for name, digest in _tree(cassettes).items() if name.startswith("regrade/")
    }}  # fmt: skip
    regrade_files = sorted(name for name in _tree(cassettes) if name.startswith("regrade/"))
    assert regrade_files == sorted(
        f"regrade/eval-{run['eval_id']}/{run['configuration']}/run-{run['run_number']}.grader.json"
        for run in graded_runs
    )

    offline = _eval(suite, "--regrade", "--grader-model", "another-grader", "--out", "offline",
                    "--min-pass-rate", "0")  # fmt: skip
    assert offline.returncode == 0, offline.stderr
    assert _benchmark(suite / "offline") == document


def test_a_changed_string_expectation_says_a_regrade_suffices(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(REPO / "example_suite", suite)
    evals_file = suite / SKILL / "evals" / "evals.json"
    evals = json.loads(evals_file.read_text())
    evals["evals"][0]["expectations"][0] = "The answer says acme owes 30.00, and nothing else"
    evals_file.write_text(json.dumps(evals, indent=2))
    missed = _eval(suite, "--out", "missed", "--eval", "1")
    assert missed.returncode == 1
    assert (
        "The conversation replayed; only the grader's request changed (the string expectations,"
        " the grader model or its parameters): a regrade suffices, no re-run: `agent-skills eval"
        " SKILL_DIR --regrade --record new` (and an upstream) grades the recorded conversations"
        " again."
    ) in missed.stderr
    with fake_endpoint() as (endpoint, url):
        regraded = _eval(suite, "--regrade", "--record", "new", "--upstream-url", url,
                         "--out", "regraded", "--eval", "1", "--min-pass-rate", "0")  # fmt: skip
    assert regraded.returncode == 0, regraded.stderr
    document = _benchmark(suite / "regraded")
    assert [run["error"] for run in document["runs"] if run["error"]] == []
    assert endpoint.requests == endpoint.grader_requests > 0
    texts = {item["text"] for run in document["runs"] for item in run["expectations"]}
    assert "The answer says acme owes 30.00, and nothing else" in texts
