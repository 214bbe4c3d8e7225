"""Where an eval's model-chosen commands run: isolated by default (sandbox, else docker), the
host only when asked for, and a refusal naming both when neither is there."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from tests.support.evals import CommandAgent, command_agent, no_isolation, recording, written
from tests.support.skill_files import write_skill
from tests.support.workspace import get_runtime

GUARDED_EVALS = {
    "skill_name": "guarded",
    "evals": [{"id": 1, "name": "one command", "prompt": "Do it.", "expectations": ["Done"]}],
}


def _guarded_skill(root: Path) -> Path:
    return write_skill(
        root / "skills", "guarded", files={"evals/evals.json": json.dumps(GUARDED_EVALS)}
    )


@pytest.fixture
def host_things(tmp_path: Path) -> Iterator[tuple[Path, Path, subprocess.Popen[bytes]]]:
    """A marker path in the home folder (``/root`` as root), a folder of the test's, and a
    process of the test's: what a hostile command goes for."""
    marker = Path.home() / f"agent-skills-eval-marker-{uuid.uuid4().hex}"
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep me\n")
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        yield marker, folder, sleeper
    finally:
        sleeper.kill()
        sleeper.wait()
        marker.unlink(missing_ok=True)


def _hostile_command(marker: Path, folder: Path, pid: int) -> str:
    return (
        f"touch {marker}; a=$?; rm -r {folder}; b=$?; kill -9 {pid}; c=$?;"
        ' echo "exits $a $b $c"; exit $((a + b + c))'
    )


def _skill_run_result(outcome: Any) -> dict[str, Any]:
    run = next(run for run in outcome.runs if run.key.configuration == "with_skill")
    call = next(call for call in run.transcript["tool_calls"] if call["name"] == "skill_run")
    result: dict[str, Any] = json.loads(call["result"])
    return result


@pytest.mark.parametrize(
    "asked",
    [
        pytest.param(None, marks=pytest.mark.sandbox, id="default-sandbox"),
        pytest.param("docker", marks=pytest.mark.docker, id="docker"),
    ],
)
def test_a_hostile_command_of_the_model_leaves_the_host_untouched(
    asked: str | None, tmp_path: Path, host_things: Any
) -> None:
    marker, folder, sleeper = host_things
    get_runtime(asked or "sandbox", tmp_path / "probe")  # skips (fails in CI) when missing
    skill = _guarded_skill(tmp_path)
    agent = CommandAgent("guarded", _hostile_command(marker, folder, sleeper.pid))
    with command_agent(agent) as url:
        options = recording(url, tmp_path, runs=1, runtime=asked)
        outcome = run_benchmark(EvalRequest(skill, options))
    assert written(outcome.document)["metadata"]["runtime"] == (asked or "sandbox")
    assert not marker.exists()
    assert (folder / "keep.txt").read_text() == "keep me\n"
    assert sleeper.poll() is None
    result = _skill_run_result(outcome)
    assert result["exit_code"] != 0, result
    assert "exits" in result["stdout"] and "No such file or directory" in result["stderr"]


NO_ISOLATION = (
    "no isolated runtime for the commands the model chooses: neither the sandbox (bubblewrap)"
    " nor docker is available here:\n"
    "- sandbox: the sandbox runtime needs bubblewrap ('bwrap'), not found on PATH:"
)
OPT_OUT = (
    "Install bubblewrap, or start Docker and build its image ('agent-skills docker-image'); or"
    " run the model's commands on this machine, unisolated, with --runtime local (pytest:"
    " --skills-eval-runtime=local; ini skills_eval_runtime; env SKILLS_EVAL_RUNTIME)"
)


def test_without_sandbox_or_docker_an_eval_refuses_unless_local_is_asked_for(
    tmp_path: Path, host_things: Any
) -> None:
    marker = host_things[0]
    skill = _guarded_skill(tmp_path)
    environment = no_isolation(tmp_path)
    agent = CommandAgent("guarded", f"touch {marker}")
    with command_agent(agent) as url:
        common = [sys.executable, "-m", "pytest_agent_skills.cli", "eval", str(skill),
                  "--record", "all", "--upstream-url", url, "--runs", "1", "-q"]  # fmt: skip
        refused = subprocess.run(
            [*common, "--out", "refused"], cwd=tmp_path, env=environment,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert NO_ISOLATION in refused.stderr
        assert "- docker: cannot reach the Docker engine" in refused.stderr
        assert OPT_OUT in refused.stderr
        assert not marker.exists() and not (tmp_path / "refused").exists()

        asked = subprocess.run(
            [*common, "--out", "local", "--runtime", "local"], cwd=tmp_path, env=environment,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert marker.exists()  # on the host, as asked
    warning = (
        "the model's commands ran on this machine (runtime local), not isolated: they could"
        " read, change and delete anything this user can"
    )
    assert f"warning: {warning}" in asked.stderr
    document = json.loads((tmp_path / "local" / "benchmark.json").read_text())
    assert document["metadata"]["runtime"] == "local"
    assert warning in (tmp_path / "local" / "benchmark.md").read_text()
    page = html.unescape((tmp_path / "local" / "report.html").read_text())
    assert f'<p class="runtime-warning" role="alert">Warning: {warning}.</p>' in page
    assert '<dt>runtime</dt><dd class="runtime-local">local</dd>' in page


def test_the_pytest_items_refuse_and_skip_when_asked_to(tmp_path: Path) -> None:
    """The eval items of a suite on a machine without isolation: failed with the refusal, or
    skipped with it under skills_runtime_missing = skip (as the example suite asks)."""
    skill = _guarded_skill(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    environment = no_isolation(tmp_path)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
               str(skill / "evals")]  # fmt: skip
    failed = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300
    )
    assert failed.returncode == 1, failed.stdout
    assert "no isolated runtime for the commands the model chooses" in failed.stdout
    assert "(or pass --skills-runtime-missing=skip)" in failed.stdout
    skipped = subprocess.run(
        [*command, "--skills-runtime-missing=skip"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert skipped.returncode == 0, skipped.stdout
    assert "1 skipped" in skipped.stdout
    assert "SKIPPED [1] skills/guarded/evals/evals.json" in skipped.stdout
    assert "no isolated runtime for the commands the model chooses" in skipped.stdout


def test_an_explicit_runtime_that_is_missing_is_refused_by_name(tmp_path: Path) -> None:
    skill = _guarded_skill(tmp_path)
    refused = subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "eval", str(skill), "--runtime",
         "sandbox", "--runs", "1"],
        cwd=tmp_path, env=no_isolation(tmp_path), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert refused.returncode == 2
    assert (
        "the eval runtime 'sandbox' is not available: the sandbox runtime needs bubblewrap"
        " ('bwrap'), not found on PATH" in refused.stderr
    )


def test_the_environment_without_isolation_hides_bubblewrap(tmp_path: Path) -> None:
    assert shutil.which("bwrap", path=no_isolation(tmp_path)["PATH"]) is None
    assert shutil.which("bash", path=no_isolation(tmp_path / "again")["PATH"]) is not None
