"""The evals' programmatic entry, :class:`EvalClient`, configured once from the same settings
the commands read: its documents are the ones ``agent-skills eval``, ``triggers`` and
``improve-description`` write, and each plan is what the command's ``--dry-run`` prints.
Replays from the example suite's recordings; records against the loopback fake endpoint."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills import EvalClient
from pytest_agent_skills.config.file_settings import FileSettings
from pytest_agent_skills.config.locate import ConfigLocator
from pytest_agent_skills.evals.client.eval_client import ImproveLoop
from pytest_agent_skills.evals.documents.benchmark_model import BenchmarkDocument
from pytest_agent_skills.evals.documents.document_io import read_document
from pytest_agent_skills.evals.documents.triggers import TriggerResultsDocument
from pytest_agent_skills.settings import load_all
from tests.support.evals import (
    REPO,
    Behaviour,
    fake_endpoint,
    recording,
    replaying,
    run_eval_command,
    write_eval_skill,
)

SKILL = ".claude/skills/invoice-totals"
OVERLAP = "overlap/skills"


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example suite, the current folder (as for the commands)."""
    folder = tmp_path / "suite"
    shutil.copytree(REPO / "example_suite", folder)
    monkeypatch.chdir(folder)
    return folder


def client_of(start: Path, **flags: Any) -> EvalClient:
    """The client of the settings a command run in the current folder on ``start`` reads,
    with these flags (ini name -> value); the commands run locally."""
    load_all()
    config = ConfigLocator(Path.cwd()).locate(start)
    return EvalClient.from_settings(FileSettings(config, {"skills_eval_runtime": "local", **flags}))


def _without_time(document: dict[str, Any]) -> dict[str, Any]:
    document["metadata"]["timestamp"] = None
    return document


def test_an_offline_benchmark_is_the_one_the_command_writes(suite: Path) -> None:
    flags = {"skills_eval_min_pass_rate": 0.0}
    benchmark = client_of(Path(SKILL), **flags).benchmark(SKILL, out=suite / "by-client")
    done = run_eval_command(
        SKILL, "-q", "--runtime", "local", "--min-pass-rate", "0", "--out", "by-command", cwd=suite
    )
    assert done.returncode == 0, done.stderr

    assert isinstance(benchmark, BenchmarkDocument)
    assert benchmark.metadata.skill_name == "invoice-totals"
    assert benchmark.runs and not any(run.error for run in benchmark.runs)
    written = read_document(BenchmarkDocument, suite / "by-command" / "benchmark.json")
    same = {"metadata": written.metadata}
    assert benchmark.model_copy(update=same) == written
    dumped = {
        name: _without_time(json.loads((suite / name / "benchmark.json").read_text()))
        for name in ("by-client", "by-command")
    }
    assert dumped["by-client"] == dumped["by-command"]
    assert (suite / "by-client" / "report.html").is_file()


def test_offline_trigger_rates_are_the_ones_the_command_writes(suite: Path) -> None:
    document = client_of(Path(SKILL)).triggers(SKILL, out=suite / "by-client")
    done = run_eval_command(
        SKILL, "--triggers", "-q", "--runtime", "local", "--out", "by-command", cwd=suite
    )
    assert done.returncode == 0, done.stderr
    assert document == read_document(
        TriggerResultsDocument, suite / "by-command" / "triggers.json"
    )
    assert [result.passed for result in document.results] == [True, True, True]


def test_each_plan_is_what_the_commands_dry_run_prints(suite: Path) -> None:
    # Each client reads the configuration file the command finds for its path, as they do.
    client, overlap = client_of(Path(SKILL)), client_of(Path(OVERLAP))
    plans = {
        "eval": (client.plan_benchmark(SKILL), ("eval", SKILL)),
        "eval --triggers": (client.plan_triggers(SKILL), ("eval", SKILL, "--triggers")),
        "triggers": (overlap.plan_matrix([Path(OVERLAP)]), ("triggers", OVERLAP)),
        "improve-description": (
            overlap.plan_improve(f"{OVERLAP}/invoice-check", loop=ImproveLoop(iterations=2)),
            ("improve-description", f"{OVERLAP}/invoice-check", "--iterations", "2"),
        ),
    }
    for name, (plan, (command, *args)) in plans.items():
        done = run_eval_command(
            *args, "--dry-run", "--runtime", "local", cwd=suite, command=command
        )
        assert done.returncode == 0, (name, done.stderr)
        assert done.stdout == plan + "\n", name
        assert plan.startswith("dry run: "), name


def test_a_recorded_benchmark_is_written_and_returned_typed(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    out = tmp_path / "out"
    with fake_endpoint() as (endpoint, url):
        client = EvalClient(recording(url, tmp_path, runs=2))
        benchmark = client.benchmark(skill, out=out)
    assert endpoint.requests > 0
    assert [(verdict.eval_id, sorted(verdict.pass_rate)) for verdict in benchmark.evals] == [
        (1, ["with_skill", "without_skill"]),
        (2, ["with_skill", "without_skill"]),
    ]
    assert read_document(BenchmarkDocument, out / "benchmark.json") == benchmark
    # Replayed offline (no upstream): the same runs and verdicts.
    replayed = EvalClient(replaying(tmp_path, runs=2)).benchmark(skill)
    assert replayed.runs == benchmark.runs
    assert replayed.evals == benchmark.evals


#: A program that runs a benchmark through the client and says what Ctrl-C left it.
INTERRUPTED_BENCHMARK = """
import sys
from pathlib import Path
from pytest_agent_skills import EvalClient, EvalInterrupted
from tests.support.evals import recording

url, skill = sys.argv[1:]
client = EvalClient(recording(url, Path.cwd(), runs=10, jobs=2), progress=sys.stderr)
try:
    client.benchmark(skill, out=Path("out"))
except EvalInterrupted as stop:
    assert isinstance(stop, KeyboardInterrupt)
    print("interrupted", len(stop.document.runs), stop.document.metadata.skill_name)
"""


def test_ctrl_c_writes_what_finished_then_raises_it_as_a_keyboard_interrupt(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    with fake_endpoint(Behaviour(delay=0.1)) as (_endpoint, url):
        process = subprocess.Popen(
            [sys.executable, "-c", INTERRUPTED_BENCHMARK, url, str(skill)],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("[4/40]"):
                break
        process.send_signal(signal.SIGINT)
        said, rest = process.communicate(timeout=60)
    assert process.returncode == 0, rest
    assert said == "interrupted 40 csv-stats\n"
    written = read_document(BenchmarkDocument, tmp_path / "out" / "benchmark.json")
    stopped = [run for run in written.runs if run.error and run.error.kind == "interrupted"]
    assert len(written.runs) == 40 and 0 < len(stopped) <= 36
