"""``agent-skills mutate --evals`` against a real OpenAI-compatible server (llama.cpp's,
serving SmolLM2-135M: bench/support/realmodel.py): the mutation run is recorded, then replayed
offline to the same report. What is asserted is the pipeline (every mutant judged, none an
error, the requests counted), never what a 135M model answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.support.realmodel import RealModel

pytestmark = [pytest.mark.realmodel, pytest.mark.usefixtures("clean_settings_env")]
REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "example_suite" / ".claude" / "skills" / "invoice-totals"
#: Seconds the recording may take: a 135M model on a busy 2-core machine.
REAL_TIMEOUT = 1800


def _mutate(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SKILLS_")}
    environment["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "mutate", *args],
        cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout, check=False,
    )


def test_a_mutation_run_recorded_from_a_real_server_replays_offline_to_the_same_report(
    real_model: RealModel, tmp_path: Path
) -> None:
    shutil.copytree(SKILL, tmp_path / "skills" / "invoice-totals")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    # Two mutants (an arithmetic one of the script, a broadened description), eval 1, two runs
    # per configuration; the agent answers without tools, one run at a time (as the eval
    # pipeline's own real-model test does).
    common = ["skills/invoice-totals", "--evals", "--eval", "1", "--runs", "2",
              "--max-mutants", "2", "--runtime", "local", "--model", real_model.model,
              "--cassettes", "cassettes", "-q",
              *real_model.param_flags(tool_choice="none")]  # fmt: skip
    recorded = _mutate(
        *common, "--format", "json", "--record", "once", "--upstream-url", real_model.base_url,
        "-o", "recorded.json", cwd=tmp_path, timeout=REAL_TIMEOUT,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "Traceback" not in recorded.stderr, recorded.stderr
    replayed = _mutate(*common, "--format", "json", "-o", "replayed.json", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    first, again = (
        json.loads((tmp_path / name).read_text(encoding="utf-8"))
        for name in ("recorded.json", "replayed.json")
    )
    assert again == first
    assert [m["operator"] for m in first["mutants"]] == ["broadened-description", "arithmetic"]
    assert {m["status"] for m in first["mutants"]} <= {"killed", "survived"}, first
    assert first["summary"]["errors"] == 0
    # Each mutant's runs were recorded in a cassette folder of its own.
    recordings = sorted((tmp_path / "cassettes" / "mutants").glob("M0*/invoice-totals/eval-1/*"))
    assert [path.relative_to(tmp_path / "cassettes" / "mutants").as_posix() for path in
            recordings] == [f"{m}/invoice-totals/eval-1/{c}" for m in ("M01", "M02")
                            for c in ("baseline", "with_skill")]  # fmt: skip
    # The text report counts the model requests and what stopping early saved.
    text = _mutate(*common, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "model requests (agent turns and grader requests" in text.stdout
    assert " made; stopping each mutant's runs once its verdict was worse saved" in text.stdout
