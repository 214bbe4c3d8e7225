"""A mutant whose checks never end is a ``timeout``, counted apart from the score, and the
command its scenario started (in a session of its own) is stopped with it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import cli

pytestmark = pytest.mark.usefixtures("clean_settings_env")

#: A loop that ends only while ``step += 1`` counts up; its mutant ``step -= 1`` never ends.
SCRIPT = """\
step = 0
while step != 3:
    step += 1
print("done", step)
"""
SCENARIO = """\
name: the loop ends
skills: ../..
user: "Count to three."
model:
  script:
    - call: skill_load
      args: {skill_name: spin}
    - call: skill_run
      args: {skill: spin, command: python3 scripts/mutation_spin_check.py}
    - say: "done"
expect:
  results:
    - {call: skill_run, match: {stdout: {contains: "done 3"}}}
"""


def _spinning() -> list[int]:
    """Processes running this test's script, wherever they run."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"mutation_spin_check.py" in command:
            found.append(int(pid))
    return found


def test_a_mutant_that_never_ends_is_a_timeout_and_leaves_no_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = tmp_path / "spin"
    (skill / "scripts").mkdir(parents=True)
    (skill / "evals").mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: spin\ndescription: Counts to three.\n---\nRun the script.\n",
        encoding="utf-8",
    )
    (skill / "scripts" / "mutation_spin_check.py").write_text(SCRIPT, encoding="utf-8")
    (skill / "evals" / "loop.scenario.yaml").write_text(SCENARIO, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status, out, err = cli(
        capsys, "mutate", "spin", "--max-mutants", "100", "--timeout", "4", "--jobs", "2",
        "--format", "json",
    )  # fmt: skip
    assert status == 0, err
    report = json.loads(out)
    [spun] = [m for m in report["mutants"] if "+    step -= 1" in m["diff"]]
    assert (spun["status"], spun["killed_by"]) == ("timeout", None)
    summary = report["summary"]
    assert summary["errors"] >= 1
    judged = summary["killed"] + summary["survived"]
    assert summary["mutants"] == judged + summary["errors"]
    assert _spinning() == []
