"""Budgets of an eval (the turn limit, a run's token cap, the whole eval's tokens) and its
dry run, against the loopback upstream of tests/support/evals.py: a run stopped by a limit is
a failed run graded on what it did, runs never started are counted apart."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.evals.report.write import write_report
from pytest_agent_skills.evals.setup.budget import TokenBudget
from pytest_agent_skills.evals.suite.output_folder import write_benchmark
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark, run_triggers
from pytest_agent_skills.evals.verdicts.benchmark_md import benchmark_markdown
from tests.support.evals import (
    Behaviour,
    fake_endpoint,
    recording,
    replaying,
    run_eval_command,
    write_eval_skill,
    written,
)


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``agent-skills eval`` with the commands on the local runtime (not these tests' subject)."""
    return run_eval_command("--runtime", "local", *args, cwd=cwd)


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return write_eval_skill(tmp_path)


def _without_timestamp(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "metadata": {**document["metadata"], "timestamp": None}}


def test_a_model_that_loops_ends_on_the_turn_limit_as_a_failed_run_graded_on_what_it_did(
    skill: Path,
) -> None:
    with fake_endpoint(Behaviour(loops=True)) as (endpoint, url):
        options = recording(url, skill.parent.parent, runs=2, jobs=2, max_turns=3)
        outcome = run_benchmark(EvalRequest(skill, options))
    runs = written(outcome.document)["runs"]
    assert len(runs) == 8
    for run in runs:
        assert run["error"] is None, run["error"]
        assert run["skipped"] is False
        assert run["result"]["stop_reason"] == "turn_limit"
        assert run["result"]["errors"] == 0 and run["result"]["pass_rate"] == 0.0
        assert run["result"]["tool_calls"] == 3
        assert run["notes"][0].startswith("stopped (turn_limit): turn limit: the model made 3")
        assert run["notes"][0].endswith(
            "An eval's turn limit is --max-turns (ini skills_eval_max_turns)."
        )
        # The grader still judged the run: its evidence, not "not graded".
        graded = [item for item in run["expectations"] if not item["text"].startswith("{")]
        assert graded and all(item["evidence"].startswith("final answer:") for item in graded)
    agent = [body for body in endpoint.bodies if "response_format" not in body]
    assert len(agent) == 8 * 3
    assert endpoint.grader_requests == 8
    assert "8 of 8 runs were stopped by a limit (turn_limit: 8): failed runs" in " ".join(
        written(outcome.document)["notes"]
    )
    assert "| stopped (turn_limit) |" in benchmark_markdown(outcome.document)

    replayed = run_benchmark(
        EvalRequest(skill, replaying(skill.parent.parent, runs=2, max_turns=3))
    )
    assert _without_timestamp(written(replayed.document)) == _without_timestamp(
        written(outcome.document)
    )


def test_a_run_stops_once_its_tokens_pass_its_cap(skill: Path) -> None:
    with fake_endpoint(Behaviour(loops=True)) as (endpoint, url):
        options = recording(url, skill.parent.parent, runs=1, max_turns=30, max_run_tokens=150)
        outcome = run_benchmark(EvalRequest(skill, options, only=(1,)))
    for run in written(outcome.document)["runs"]:
        assert run["error"] is None and run["result"]["stop_reason"] == "run_tokens"
        tokens = run["result"]["tokens"]
        assert tokens > 150
        assert run["notes"][0].startswith(
            f"stopped (run_tokens): run token cap: the run's requests used {tokens} tokens,"
            " past its cap of 150 (--max-run-tokens"
        )
        assert run["result"]["tool_calls"] < 30
    agent = [body for body in endpoint.bodies if "response_format" not in body]
    # One request fewer than the turns: the last answer's tokens passed the cap.
    assert len(agent) == sum(
        run["result"]["tool_calls"] for run in written(outcome.document)["runs"]
    )


@pytest.mark.parametrize("jobs", [1, 4])
def test_no_run_starts_once_the_eval_budget_is_spent_and_the_rest_are_counted_apart(
    skill: Path, jobs: int, tmp_path: Path
) -> None:
    with fake_endpoint() as (endpoint, url):
        options = recording(url, skill.parent.parent, runs=6, jobs=jobs, max_tokens=2000)
        outcome = run_benchmark(EvalRequest(skill, options))
    document = written(outcome.document)
    runs = document["runs"]
    assert len(runs) == 24
    left_out = [run for run in runs if run["skipped"]]
    measured = [run for run in runs if not run["skipped"]]
    assert left_out and measured
    assert document["metadata"]["runs_skipped"] == len(left_out)
    for run in left_out:
        assert run["result"]["stop_reason"] == "budget" and run["error"] is None
        assert run["result"]["errors"] == 0 and run["result"]["tokens"] == 0
        assert all(not item["passed"] for item in run["expectations"])
    assert not any(run["error"] for run in runs)
    # Every answer's tokens, the grader's too, are in the budget.
    answered = sum(run["result"]["tokens"] for run in measured)
    assert outcome.tokens > answered
    # No run started after the budget was spent: at most the runs going on at once, each
    # started below the budget, spent past it.
    most = max(run["result"]["tokens"] for run in measured) * 3
    assert outcome.tokens < 2000 + jobs * most
    if jobs == 1:  # in plan order: measured runs first, then only skipped ones
        first_skipped = runs.index(left_out[0])
        assert all(run["skipped"] for run in runs[first_skipped:])
    # Skipped runs are in neither the pass rates nor the errors.
    for verdict in document["evals"]:
        mine = [run for run in runs if run["eval_id"] == verdict["eval_id"]]
        assert verdict["skipped"] == sum(run["skipped"] for run in mine)
        assert verdict["errors"] == 0
    assert any(run["configuration"] == "with_skill" for run in measured)
    note = f"{len(left_out)} of 24 runs were never started: the token budget (--max-tokens)"
    assert any(text.startswith(note) for text in document["notes"])
    markdown = benchmark_markdown(outcome.document)
    assert f"- {note}" in markdown  # the note, said once
    assert "| skipped (budget) |" in markdown
    # Nothing was asked for a skipped run: one grading request per measured run.
    assert len([body for body in endpoint.bodies if "response_format" in body]) == len(measured)

    out = tmp_path / f"out-{jobs}"
    write_benchmark(out, outcome.document, outcome.runs, outcome.evals)
    page = write_report(out).read_text()
    assert f"{note} was spent; counted in neither pass nor error." in page
    run_links = page.count('class="run is-')
    assert run_links == len(measured)  # the skipped runs are in no figure and no run list


def test_the_budget_counts_from_every_thread() -> None:
    budget = TokenBudget(10_000)

    def spend() -> None:
        for _ in range(1000):
            budget.spend(1)

    threads = [threading.Thread(target=spend) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.spent == 8000 and budget.allows_start()
    budget.spend(2000)
    assert not budget.allows_start() and budget.describe() == "10000 of 10000 tokens"
    assert TokenBudget().allows_start() and TokenBudget().describe() == "0 tokens"


def test_trigger_runs_past_the_budget_are_skipped_not_measured(skill: Path) -> None:
    with fake_endpoint() as (_endpoint, url):
        options = recording(url, skill.parent.parent, runs=6, jobs=1, max_tokens=200)
        outcome = run_triggers(EvalRequest(skill, options))
    results = written(outcome.document)["results"]
    assert sum(result["skipped"] for result in results) > 0
    for result in results:
        assert result["runs"] + result["skipped"] == 6
        assert result["errors"] == 0


def test_a_dry_run_prints_the_conversations_and_their_bounds_and_asks_nothing(
    skill: Path, tmp_path: Path
) -> None:
    with fake_endpoint() as (endpoint, url):
        before = _eval(
            str(skill), "--dry-run", "--record", "all", "--upstream-url", url, "--runs", "2",
            "--max-turns", "5", "--max-tokens", "9000", "--model", "fake-agent", cwd=tmp_path,
        )  # fmt: skip
        assert endpoint.requests == 0
    assert before.returncode == 0, before.stderr
    lines = before.stdout.splitlines()
    assert lines[0] == "dry run: evals of csv-stats: 8 conversation(s), no request made"
    assert (
        "  eval 1 with_skill run 1: at most 7 request(s), not recorded: What is the mean of the"
        " value column in data.csv?"
    ) in lines
    assert "  eval 2 without_skill run 2: at most 7 request(s), not recorded: Tell me the" in (
        before.stdout
    )
    assert "at most 56 model request(s) in all; 0 of 8 conversation(s) recorded, 0 tokens" in lines
    assert (
        "requests: at most 5 model turns a run (--max-turns), and 2 grader requests a graded"
        " run; each sent up to 5 times when the endpoint asks again (--attempts)"
    ) in lines
    assert "budgets: no cap a run (--max-run-tokens), 9000 tokens in all (--max-tokens)" in lines
    assert not (tmp_path / "evals-out").exists()

    with fake_endpoint() as (_endpoint, url):
        recorded = _eval(
            str(skill), "--record", "all", "--upstream-url", url, "--runs", "2",
            "--model", "fake-agent", "--min-pass-rate", "0", "-q", cwd=tmp_path,
        )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    spent = json.loads((tmp_path / "evals-out" / "benchmark.json").read_text())
    after = _eval(str(skill), "--dry-run", "--runs", "2", cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert "0 of 8 conversation(s) recorded" not in after.stdout
    first = spent["runs"][0]
    assert first["run_dir"] == "eval-1/with_skill/run-1"
    shown = next(line for line in after.stdout.splitlines() if "eval 1 with_skill run 1:" in line)
    recorded_tokens = int(shown.split("recorded ")[1].split(" tokens")[0])
    # The run's own tokens and its grader's.
    assert recorded_tokens > first["result"]["tokens"] > 0
    assert "8 of 8 conversation(s) recorded" in after.stdout

    triggers = _eval(str(skill), "--dry-run", "--triggers", "--runs", "3", cwd=tmp_path)
    assert triggers.returncode == 0, triggers.stderr
    assert "dry run: trigger queries of csv-stats: 6 conversation(s), no request made" in (
        triggers.stdout
    )
    assert "  query 2 run 3: at most 30 request(s), not recorded: Write me a haiku" in (
        triggers.stdout
    )

    # A recording edited by hand is no recording: the dry run names the file and the field.
    cassette = next((tmp_path / "eval-cassettes").rglob("run-1.json"))
    edited = json.loads(cassette.read_text())
    edited["interactions"][0].pop("response")
    cassette.write_text(json.dumps(edited))
    refused = _eval(str(skill), "--dry-run", "--runs", "2", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout
    assert (
        f"{cassette}: interactions[0].response: expected an object (the field is required),"
        " found nothing (not a cassette document)"
    ) in refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_command_line_counts_skipped_runs_apart(skill: Path, tmp_path: Path) -> None:
    with fake_endpoint() as (_endpoint, url):
        done = _eval(
            str(skill), "--record", "all", "--upstream-url", url, "--runs", "6", "--jobs", "2",
            "--max-tokens", "2000", "--model", "fake-agent", "--min-pass-rate", "0",
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "evals-out" / "benchmark.json").read_text())
    left_out = document["metadata"]["runs_skipped"]
    assert left_out > 0
    assert (  # benchmark.json's note, with the tokens spent
        f"{left_out} of 24 runs were never started: the token budget (--max-tokens) was spent;"
        " counted in neither pass nor error ("
    ) in done.stdout
    assert "skipped (budget)" in done.stderr  # the progress lines
    skipped_dirs = [run["run_dir"] for run in document["runs"] if run["skipped"]]
    assert not any((tmp_path / "evals-out" / folder).exists() for folder in skipped_dirs)
    refused = _eval(str(skill), "--max-tokens", "0", cwd=tmp_path)
    assert refused.returncode == 2
    assert (
        "command line (--max-tokens): --skills-eval-max-tokens must be a whole number of at"
        " least 1, got 0"
    ) in refused.stderr
