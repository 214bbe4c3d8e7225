"""``agent-skills eval`` as a user runs it (whole processes), and the pytest items of eval
files (pytester): exit statuses, progress, Ctrl-C, failure texts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.evals import Behaviour, fake_endpoint, run_eval_command, write_eval_skill

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[2]


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``agent-skills eval`` with the commands on the local runtime (not these tests' subject)."""
    return run_eval_command("--runtime", "local", *args, cwd=cwd)


def test_record_then_replay_from_the_command_line_with_its_exit_statuses(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    with fake_endpoint() as (_endpoint, url):
        recorded = _eval(
            str(skill), "--record", "all", "--upstream-url", url, "--runs", "4",
            "--out", "recorded", "--model", "fake-agent", "--min-pass-rate", "0",
            cwd=tmp_path,
        )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert "[16/16] evals of csv-stats:" in recorded.stderr and "tokens" in recorded.stderr
    assert "eval 1 mean of a column: with_skill " in recorded.stdout
    assert (tmp_path / "eval-cassettes" / "csv-stats" / "eval-1" / "with_skill").is_dir()
    assert "mean of a column" in (tmp_path / "recorded" / "report.html").read_text()

    replayed = _eval(str(skill), "--runs", "4", "--out", "replayed", "--model", "fake-agent",
                     "--min-pass-rate", "0", cwd=tmp_path)  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    first, again = (
        json.loads((tmp_path / name / "benchmark.json").read_text())
        for name in ("recorded", "replayed")
    )
    first["metadata"]["timestamp"] = again["metadata"]["timestamp"] = None
    assert first == again

    strict = _eval(str(skill), "--runs", "4", "--out", "strict", "--model", "fake-agent",
                          "-q", cwd=tmp_path)  # fmt: skip
    assert strict.returncode == 1  # the stochastic agent misses the default bar of 1.0
    assert "NOT met: the mean pass rate with the skill" in strict.stdout
    # The report's eval table says each eval's bar in the command's words.
    page = (tmp_path / "strict" / "report.html").read_text()
    for line in strict.stdout.splitlines():
        if line.startswith("eval "):
            bar = line.rpartition(" (")[2].removesuffix(")")
            assert f">{bar}</td>" in page, bar
    assert strict.stderr.splitlines() == [  # -q: no progress; the warnings stay
        "warning: the model's commands ran on this machine (runtime local), not isolated: they"
        " could read, change and delete anything this user can",
        # No --grader-model: the agent grades itself, and says so.
        "warning: Judge and agent are not apart: the grader 'fake-agent' is the agent's own"
        " model: a judge of the agent's own family may favour it; name a grader of another"
        " family with --grader-model",
    ]

    usage = _eval(str(skill), "--runs", "0", cwd=tmp_path)
    assert usage.returncode == 2
    assert (
        "command line (--runs): --skills-eval-runs must be a whole number of at least 1, got 0"
        in usage.stderr
    )
    for flag, value, message in (
        ("--model-param", "temperature=warm", "--skills-model-param temperature: the value"
         " 'warm' is not JSON"),
        ("--grader-param", 'messages=[]', "--skills-grader-param messages: the harness writes"),
    ):  # fmt: skip
        refused = _eval(str(skill), flag, value, cwd=tmp_path)
        assert refused.returncode == 2
        assert f"error: command line ({flag}): {message}" in refused.stderr


def test_a_replay_that_was_never_recorded_says_how_to_record(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    done = _eval(str(skill), "--runs", "1", "-q", cwd=tmp_path)
    assert done.returncode == 1
    assert "no cassette:" in done.stderr
    assert "agent-skills eval SKILL_DIR --record new" in done.stderr


def _interrupted(skill: Path, *flags: str) -> tuple[int, str, float]:
    """``agent-skills eval SKILL FLAGS`` against a slow endpoint, stopped by Ctrl-C once its
    fourth run has started: the exit status, what it printed on stderr, and how long it took
    to stop."""
    cwd = skill.parents[1]
    with fake_endpoint(Behaviour(delay=0.1)) as (_endpoint, url):
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest_agent_skills.cli", "eval", str(skill), *flags,
             "--record", "all", "--upstream-url", url, "--runs", "10", "--jobs", "2",
             "--out", "out", "--model", "fake-agent", "--runtime", "local"],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            if line.startswith("[4/"):
                break
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _out, rest = process.communicate(timeout=60)
    return process.returncode, "".join(seen) + rest, time.monotonic() - started


def test_ctrl_c_stops_the_trigger_runs_and_says_what_is_written(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    status, stderr, _stopped_in = _interrupted(skill, "--triggers")
    assert status == 130, stderr
    assert "interrupted: the runs that finished are written" in stderr
    document = json.loads((skill.parents[1] / "out" / "triggers.json").read_text())
    assert document["$schema"].endswith("/trigger-results.schema.json")


def test_ctrl_c_stops_the_runs_and_keeps_what_finished(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    status, stderr, stopped_in = _interrupted(skill)
    assert status == 130, stderr
    assert stopped_in < 15
    assert "interrupted: the runs that finished are written" in stderr
    document = json.loads((skill.parents[1] / "out" / "benchmark.json").read_text())
    runs = document["runs"]
    assert len(runs) == 40
    finished = [run for run in runs if run["error"] is None]
    stopped = [run for run in runs if run["error"] and run["error"]["kind"] == "interrupted"]
    assert len(finished) >= 4 and stopped
    assert len(finished) + len(stopped) == 40
    assert all(run["result"]["pass_rate"] == 0 for run in stopped)
    kept = tmp_path / "out" / finished[0]["run_dir"] / "transcript.json"
    assert json.loads(kept.read_text())["final_text"]


def test_a_bad_eval_setting_fails_each_item_with_the_file_and_the_fix_not_a_traceback(
    pytester: pytest.Pytester,
) -> None:
    _suite(pytester)
    pyproject = pytester.path / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace("skills_eval_runs = 5", "skills_eval_runs = 0")
    )
    result = pytester.runpytest_subprocess("skills/csv-stats/evals", "-p", "no:cacheprovider")
    message = (
        f"{pyproject}: skills_eval_runs: --skills-eval-runs must be a whole number of at least"
        " 1, got 0"
    )
    result.stdout.fnmatch_lines(
        ["*_ eval 1: mean of a column _*", message, "*_ triggers _*", message]
    )
    assert "Traceback" not in result.stdout.str() and "raise " not in result.stdout.str()
    result.assert_outcomes(failed=3)


def test_a_bad_triggers_file_fails_its_item_at_its_line_not_a_traceback(
    pytester: pytest.Pytester,
) -> None:
    skill = _suite(pytester)
    (skill / "evals" / "triggers.json").write_text('[\n {"query": "x", "should_trigger": "yes"}]')
    result = pytester.runpytest_subprocess(
        "skills/csv-stats/evals/triggers.json", "-p", "no:cacheprovider"
    )
    result.stdout.fnmatch_lines(
        [
            "*_ triggers _*",
            f"{skill}/evals/triggers.json:2: [[]0].should_trigger: expected a boolean, found a"
            ' string "yes"',
        ]
    )
    assert "Traceback" not in result.stdout.str()
    result.assert_outcomes(failed=1)


def _suite(pytester: pytest.Pytester) -> Path:
    skill = write_eval_skill(pytester.path)
    pytester.makefile(
        ".toml",
        pyproject='[tool.pytest.ini_options]\nskills_model = "fake-agent"\nskills_eval_runs = 5\n'
        'skills_eval_runtime = "local"\n',
    )
    return skill


def test_pytest_collects_an_item_per_eval_and_one_for_the_triggers(
    pytester: pytest.Pytester,
) -> None:
    skill = _suite(pytester)
    with fake_endpoint() as (_endpoint, url):
        recorded = pytester.runpytest_subprocess(
            "skills/csv-stats/evals", "--skills-record=all", f"--skills-upstream-url={url}",
            "--skills-eval-min-pass-rate=0", "--skills-eval-threshold=0.1",
            "-p", "no:cacheprovider", "-v",
        )  # fmt: skip
    recorded.stdout.fnmatch_lines(
        [
            "*evals.json::eval 1: mean of a column PASSED*",
            "*evals.json::eval 2: mean, said plainly PASSED*",
            "*triggers.json::triggers PASSED*",
        ]
    )
    assert skill.is_dir()
    replayed = pytester.runpytest_subprocess("skills/csv-stats/evals", "-p", "no:cacheprovider")
    replayed.stdout.fnmatch_lines(
        [
            "*eval 1 (mean of a column) is below its bar: the mean pass rate with the skill *"
            " is below 1.00",
            "pass rate: with_skill * ± *, without_skill * ± *; delta *",
            # Which expectations failed, in the report's words.
            "- 'The answer gives the mean the script computed' failed in */5 with_skill, */5"
            " without_skill",
            "| eval | configuration | run | passed | time (s) | tokens | tool calls"
            " | error or stop |",
            "| 1 | with_skill | 1 | */2 | * |",
        ]
    )
    assert replayed.ret == 1


def test_a_bad_evals_file_is_a_collection_error_at_its_line(pytester: pytest.Pytester) -> None:
    skill = _suite(pytester)
    (skill / "evals" / "evals.json").write_text(
        '{"skill_name": "csv-stats",\n "evals": [{"id": 1, "prompt": "p", "expectatons": ["x"]}]}'
    )
    result = pytester.runpytest_subprocess("skills/csv-stats/evals", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        ["*evals.json:2: unknown key 'expectatons' in evals?0?. Did you mean 'expectations'?*"]
    )
    assert result.ret == 2
