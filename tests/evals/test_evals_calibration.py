"""``agent-skills eval --calibrate``: an A/A run of the seeded stochastic grader, its noise
floor in calibration.json, and that floor beside every delta of a later benchmark measured
with the same settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytest_agent_skills.evals.verdicts import stats
from tests.support.evals import NOISY_EVALS, Behaviour, fake_endpoint, write_eval_skill

REPO = Path(__file__).resolve().parents[2]


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "eval", *args, "-q",
         "--runtime", "local",
         "--model", "fake-agent", "--min-pass-rate", "0", "--record", "all", "--jobs", "2"],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_an_a_a_calibration_reports_its_flips_and_a_delta_interval_containing_0(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path, evals=NOISY_EVALS)
    with fake_endpoint(Behaviour(seed=9, grader_pass=0.6)) as (_endpoint, url):
        calibrated = _eval(str(skill), "--calibrate", "--upstream-url", url, "--runs", "5",
                           "--out", "out", cwd=tmp_path)  # fmt: skip
        assert calibrated.returncode == 0, calibrated.stderr
        aa = json.loads((tmp_path / "out" / "benchmark.json").read_text())
        real = _eval(str(skill), "--upstream-url", url, "--runs", "5", "--out", "out",
                     cwd=tmp_path)  # fmt: skip
        assert real.returncode == 0, real.stderr
        other = _eval(str(skill), "--upstream-url", url, "--runs", "4", "--out", "other",
                      cwd=tmp_path)  # fmt: skip
    assert aa["metadata"]["configurations"] == ["with_skill", "with_skill_repeat"]
    assert {run["configuration"] for run in aa["runs"]} == {"with_skill", "with_skill_repeat"}
    assert (tmp_path / "eval-cassettes" / "csv-stats" / "eval-1" / "with_skill_repeat").is_dir()
    # The flips, counted again from the runs: run n of one against run n of the other.
    verdicts = {
        (run["eval_id"], run["configuration"], run["run_number"], item["text"]): item["passed"]
        for run in aa["runs"]
        for item in run["expectations"]
    }
    pairs = [
        (passed, verdicts[(eval_id, "with_skill_repeat", number, text)])
        for (eval_id, configuration, number, text), passed in verdicts.items()
        if configuration == "with_skill"
    ]
    flipped = sum(first != second for first, second in pairs)
    calibration = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert (calibration["flipped"], calibration["compared"]) == (flipped, 3 * 5 * 3)
    assert calibration["flip_share"] == round(flipped / 45, 4)
    assert 0 < flipped < 45  # a grader passing 60% of the time flips some verdicts
    assert f"calibration: {flipped} of 45 expectation verdicts flip" in calibrated.stdout
    # Nothing differs between the two configurations: the delta's interval contains 0.
    low, high = aa["overall"]["delta_ci95"]
    assert low < 0 < high and aa["overall"]["verdict"] == "inconclusive"
    assert calibration["delta_ci95"] == [low, high]
    for verdict in aa["evals"]:
        assert not stats.Interval(*verdict["delta_ci95"]).excludes(0.0)

    # A real benchmark with the same settings carries the floor beside every delta.
    document = json.loads((tmp_path / "out" / "benchmark.json").read_text())
    assert document["metadata"]["configurations"] == ["with_skill", "without_skill"]
    assert document["calibration"]["delta_ci95"] == [low, high]
    for verdict, floor in zip(document["evals"], aa["evals"], strict=True):
        assert verdict["noise_floor_ci95"] == floor["delta_ci95"]
    markdown = (tmp_path / "out" / "benchmark.md").read_text()
    assert (  # the words of the command
        f"{flipped} of 45 expectation verdicts flip between with_skill and with_skill_repeat;"
        " their delta's 95% interval ["
    ) in markdown
    assert "A/A floor [" in markdown
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.count("A/A noise floor") == 1 + len(document["evals"])
    # Other settings (4 runs, another folder): no floor claimed.
    assert other.returncode == 0, other.stderr
    assert "calibration" not in json.loads((tmp_path / "other" / "benchmark.json").read_text())
