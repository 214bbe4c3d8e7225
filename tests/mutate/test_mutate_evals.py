"""``agent-skills mutate --evals`` against a loopback endpoint playing a seeded agent and a
grader (tests/support/evals.py): a mutant is killed when its verdict against the original is
worse, its runs stop there, the requests saved are counted, the recording replays offline to
the same report, and --dry-run makes no request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.cli import cli
from tests.support.evals import Behaviour, fake_endpoint, write_eval_skill

pytestmark = pytest.mark.usefixtures("clean_settings_env")

COMMON = ("mutate", "skills/csv-stats", "--evals", "--eval", "1", "--runs", "3",
          "--max-mutants", "3", "--runtime", "local", "--cassettes", "cassettes")  # fmt: skip


#: The eval skill's script, its errors named without a traceback: a traceback holds the path
#: of the run's workspace, which differs from run to run, so a recording of it would not
#: replay.
SCRIPT = """\
import csv, json, os, sys


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    values = [float(row["value"]) for row in rows]
    os.makedirs("out", exist_ok=True)
    json.dump({"mean": sum(values) / len(values)}, open("out/stats.json", "w"))
    print("mean", sum(values) / len(values))


try:
    main()
except Exception as error:
    print(type(error).__name__, file=sys.stderr)
    sys.exit(1)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    skill = write_eval_skill(tmp_path)
    (skill / "scripts" / "stats.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_worse_verdict_kills_stops_the_runs_and_the_recording_replays(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_endpoint(Behaviour(uses_skill=1.0)) as (fake, url):
        status, out, err = cli(
            capsys, *COMMON, "--record", "once", "--upstream-url", url, "-q"
        )
        recorded_requests = fake.requests
    assert status == 0, err
    mutants = {line.split()[0]: line for line in out.splitlines() if line[:2] == "M0"}
    # The script made to exit early: every run of the mutant fails where the original's pass.
    assert mutants["M02"] == "M02 constant scripts/stats.py:5 killed by eval 1 mean of a column"
    assert mutants["M01"] == "M01 broadened-description SKILL.md:3 survived"
    found = re.search(r"\): (\d+) made; stopping each mutant's runs once its verdict was"
                      r" worse saved about (\d+) \(", out)  # fmt: skip
    assert found is not None, out
    made, saved = map(int, found.groups())
    assert made > 0 and saved > 0  # the killed mutant's third runs were never made
    assert recorded_requests > 0
    with fake_endpoint() as (offline, _url):  # no upstream given: it must get nothing
        status, replayed, err = cli(capsys, *COMMON, "-q")
        assert offline.requests == 0
    assert status == 0, err
    assert replayed == out
    status, first, _err = cli(capsys, *COMMON, "--format", "json", "-q")
    report = json.loads(first)
    assert {m["id"]: m["status"] for m in report["mutants"]} == {
        key: "survived" if line.endswith(" survived") else "killed"
        for key, line in mutants.items()
    }


def test_a_dry_run_plans_the_runs_and_makes_no_request(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_endpoint() as (fake, url):
        status, out, _err = cli(capsys, *COMMON, "--dry-run", "--upstream-url", url)
        assert fake.requests == 0
    assert status == 0
    assert out.startswith("3 mutants, each run against the original as its baseline:\n  M01 ")
    assert "each mutant: 2 runs per configuration first, then one more at a time up to 3," in out
    assert "dry run: evals of csv-stats: 6 conversation(s), no request made" in out
    assert not (project / "cassettes").exists()


def test_evals_and_pytest_are_refused_together(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _out, err = cli(capsys, *COMMON, "--pytest")
    assert status == 2
    assert "--evals and --pytest each choose what runs against a mutant: give one" in err
