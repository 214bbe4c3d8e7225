"""An eval's input files (``files`` in evals.json): staged from the skill folder only, links
followed while they stay inside it, never a pipe or a device opened, a bounded read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pytest_agent_skills.config.runtimes import RuntimeOptions
from pytest_agent_skills.evals.setup.eval_files import EvalFileError, load_evals
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from tests.support.evals import REPO, CommandAgent, command_agent, recording, write_eval_skill

DATA = "evals/files/data.csv"


def _eval_cli(skill: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "eval", str(skill), "--runtime",
         "local", "--runs", "1"],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _line_of_files(skill: Path) -> int:
    text = (skill / "evals" / "evals.json").read_text().splitlines()
    return next(number for number, line in enumerate(text, 1) if DATA in line)


def test_an_input_linked_out_of_the_skill_is_a_usage_error_naming_link_and_target(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    secret = tmp_path / "secret.csv"
    secret.write_text("value\n42\n")
    (skill / DATA).unlink()
    (skill / DATA).symlink_to(secret)
    done = _eval_cli(skill, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    evals_file = skill / "evals" / "evals.json"
    assert done.stderr.endswith(
        f"\nagent-skills eval: error: {evals_file}:{_line_of_files(skill)}: input file"
        f" '{DATA}': {skill / DATA} is a symbolic link to {secret}, outside the skill folder"
        f" {skill}; it is not followed (only the skill folder is staged for the agent). Replace"
        " the link with a copy of the file.\n"
    )
    assert not (tmp_path / "evals-out").exists()


def test_a_folder_linked_out_on_the_way_is_named(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "data.csv").write_text("value\n1\n")
    (skill / DATA).unlink()
    (skill / "evals" / "files").rmdir()
    (skill / "evals" / "files").symlink_to(outside)
    with pytest.raises(EvalFileError) as raised:
        load_evals(skill, "csv-stats")
    assert (
        f"input file '{DATA}': {skill / 'evals' / 'files'} is a symbolic link to {outside},"
        " outside the skill folder"
    ) in str(raised.value)


def test_an_input_linked_inside_the_skill_is_staged(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    shared = skill / "shared" / "numbers.csv"
    shared.parent.mkdir()
    shared.write_text("value\n7\n8\n")
    (skill / DATA).unlink()
    (skill / DATA).symlink_to(Path("../../shared/numbers.csv"))
    agent = CommandAgent("csv-stats", "cat work/inputs/data.csv")
    with command_agent(agent) as url:
        outcome = run_benchmark(EvalRequest(skill, recording(url, tmp_path, runs=1), only=(1,)))
    run = next(run for run in outcome.runs if run.key.configuration == "with_skill")
    assert run.error is None
    call = next(call for call in run.transcript["tool_calls"] if call["name"] == "skill_run")
    assert json.loads(call["result"])["stdout"] == "value\n7\n8\n"


@pytest.mark.parametrize("command", ["", "cat work/inputs/data.csv"], ids=["none", "one"])
def test_a_run_makes_its_workspace_at_its_first_command_only(tmp_path: Path, command: str) -> None:
    """The inputs are staged when a command first needs the workspace: a run whose agent runs
    no command makes no workspace (kept workspaces show every one that was made)."""
    skill = write_eval_skill(tmp_path)
    work_root = tmp_path / "workspaces"
    kept = RuntimeOptions(work_root=work_root, keep_workspaces=True)
    with command_agent(CommandAgent("csv-stats", command)) as url:
        options = recording(url, tmp_path, runs=1, workspaces=kept)
        outcome = run_benchmark(EvalRequest(skill, options, only=(1,)))
    [run] = [run for run in outcome.runs if run.key.configuration == "with_skill"]
    assert run.error is None
    made = sorted(path.name for path in work_root.iterdir()) if work_root.exists() else []
    if not command:
        assert made == []
        assert [call["name"] for call in run.transcript["tool_calls"]] == ["skill_load"]
    else:
        [workspace] = made  # the run's own: the baseline run does not load the skill's command
        assert (work_root / workspace / "work" / "inputs" / "data.csv").read_bytes() == (
            skill / DATA
        ).read_bytes()


def _load_within(skill: Path, seconds: float) -> BaseException | None:
    """What load_evals raises, run in a thread that must end within ``seconds`` (an open of a
    named pipe would block it)."""
    raised: list[BaseException] = []

    def load() -> None:
        try:
            load_evals(skill, "csv-stats")
        except BaseException as error:
            raised.append(error)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "load_evals blocked on the input file"
    return raised[0] if raised else None


@pytest.mark.parametrize("linked", [False, True], ids=["fifo", "link-to-fifo"])
def test_a_named_pipe_is_refused_without_being_opened(tmp_path: Path, linked: bool) -> None:
    skill = write_eval_skill(tmp_path)
    (skill / DATA).unlink()
    pipe = skill / ("evals/files/pipe" if linked else DATA)
    os.mkfifo(pipe)
    if linked:
        (skill / DATA).symlink_to("pipe")
    error = _load_within(skill, 10)
    assert isinstance(error, EvalFileError)
    assert (
        f"input file '{DATA}' is a named pipe (FIFO), not a regular file; only regular files"
        " are read. Replace it with a regular file."
    ) in str(error)


def test_an_input_over_the_limit_is_refused_naming_it(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    with open(skill / DATA, "r+b") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)  # sparse: nothing of it is written
    error = _load_within(skill, 10)
    assert isinstance(error, EvalFileError)
    assert (
        f"input file '{DATA}' is 16777217 bytes, over the limit of 16777216 bytes (16 MiB) for a"
        " staged input file; make it smaller (split it into several files)."
    ) in str(error)
