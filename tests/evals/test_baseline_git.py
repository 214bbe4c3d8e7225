"""``agent-skills eval --baseline git:REF``: the skill as it was at a git ref, taken with git
archive (the working tree untouched), is the ``baseline`` configuration; recorded, then replayed
offline to the same benchmark, whose verdicts compare ``with_skill`` with ``baseline``; the ref
and the commit are in benchmark.json's metadata and benchmark.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.evals import fake_endpoint, run_eval_command, write_eval_skill
from tests.support.git_repos import commit_all, git


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``agent-skills eval`` with the commands on the local runtime (not these tests' subject)."""
    return run_eval_command("--runtime", "local", *args, cwd=cwd)


def _repository(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository whose skill changed in its last commit: (the repository, the skill)."""
    repository = tmp_path / "repo"
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    skill = write_eval_skill(repository)
    (repository / ".gitignore").write_text("eval-cassettes/\nout-*/\n", encoding="utf-8")
    commit_all(repository, "the skill")
    skill_file = skill / "SKILL.md"
    skill_file.write_text(
        skill_file.read_text(encoding="utf-8") + "Show the mean with two decimals.\n",
        encoding="utf-8",
    )
    commit_all(repository, "a step more")
    return repository, skill


def test_baseline_git_ref_records_and_replays_with_skill_against_baseline(
    tmp_path: Path,
) -> None:
    repository, skill = _repository(tmp_path)
    commit = git(repository, "rev-parse", "HEAD~1").strip()
    common = ("--baseline", "git:HEAD~1", "--runs", "2", "--model", "fake-agent",
              "--min-pass-rate", "0")  # fmt: skip

    with fake_endpoint() as (endpoint, url):
        recorded = _eval(str(skill), *common, "--record", "all", "--upstream-url", url,
                         "--out", "out-recorded", cwd=repository)  # fmt: skip
    # 1: an eval whose skill does worse than the baseline falls short (a verdict, not an error)
    assert recorded.returncode in (0, 1), recorded.stderr
    assert endpoint.requests > 0
    assert f"baseline: {skill} as it was at HEAD~1 (commit {commit})" in recorded.stderr
    replayed = _eval(str(skill), *common, "--out", "out-replayed", cwd=repository)
    assert replayed.returncode == recorded.returncode, replayed.stderr
    assert replayed.stdout == recorded.stdout.replace("out-recorded", "out-replayed")
    assert ", baseline " in replayed.stdout  # each eval's pass rate under both

    first, again = (
        json.loads((repository / name / "benchmark.json").read_text(encoding="utf-8"))
        for name in ("out-recorded", "out-replayed")
    )
    first["metadata"]["timestamp"] = again["metadata"]["timestamp"] = None
    assert first == again
    assert first["metadata"]["configurations"] == ["with_skill", "baseline"]
    assert first["metadata"]["baseline"] == {"ref": "HEAD~1", "commit": commit}
    assert set(first["run_summary"]) == {"with_skill", "baseline", "delta"}
    verdicts = first["evals"]
    assert verdicts and all("delta" in verdict for verdict in verdicts)
    assert {run["configuration"] for run in first["runs"]} == {"with_skill", "baseline"}
    markdown = (repository / "out-replayed" / "benchmark.md").read_text(encoding="utf-8")
    assert f"Baseline: the skill as it was at HEAD~1 (commit {commit}), taken from git." in (
        markdown
    )
    # git archive only: the working tree and the index are as they were.
    assert git(repository, "status", "--porcelain") == ""


def test_a_skill_absent_at_the_ref_is_a_clear_error(tmp_path: Path) -> None:
    repository, skill = _repository(tmp_path)

    done = _eval(str(skill), "--baseline", "git:HEAD~2", cwd=repository)
    assert done.returncode == 2
    assert "--baseline git:HEAD~2: unknown git ref 'HEAD~2'" in done.stderr

    git(repository, "mv", "skills/csv-stats", "skills/csv-stats-2")
    commit_all(repository, "renamed")
    moved = repository / "skills" / "csv-stats-2"
    done = _eval(str(moved), "--baseline", "git:HEAD~1", cwd=repository)
    assert done.returncode == 2
    commit = git(repository, "rev-parse", "--short=7", "HEAD~1").strip()
    assert (
        f"--baseline git:HEAD~1: skills/csv-stats-2 did not exist at HEAD~1 ({commit}) in"
        f" {repository}; give a ref where it exists, or a folder with --baseline DIR"
    ) in done.stderr


def test_improve_description_starts_from_the_description_at_a_git_ref(tmp_path: Path) -> None:
    from bench.support.routing import word_overlap_endpoint, write_repository
    from tests.support.evals import REPO

    planted = "Helps with data."
    repository = tmp_path / "repo"
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    queries = [("mean of the value column in my csv file", True), ("median of a csv column", True),
               ("csv column statistics", True), ("write my meeting notes", False),
               ("a poem about data", False)]  # fmt: skip
    skills = write_repository(repository, {"csv-stats": (planted, queries)})
    (repository / ".gitignore").write_text("eval-cassettes/\nout/\n", encoding="utf-8")
    commit_all(repository, "planted")
    skill_file = skills / "csv-stats" / "SKILL.md"
    skill_file.write_text(
        skill_file.read_text(encoding="utf-8").replace(planted, "Statistics of csv columns."),
        encoding="utf-8",
    )
    commit_all(repository, "a better description")
    commit = git(repository, "rev-parse", "HEAD~1").strip()

    with word_overlap_endpoint() as (_model, url):
        done = subprocess.run(
            [sys.executable, "-m", "pytest_agent_skills.cli", "improve-description",
             "skills/csv-stats", "--baseline", "git:HEAD~1", "--record", "all",
             "--upstream-url", url, "--model", "word-overlap", "--runs", "1",
             "--iterations", "1", "--runtime", "local", "--out", "out", "-q"],
            cwd=repository, env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    document = json.loads((repository / "out" / "description-candidates.json").read_text())
    assert document["original"] == planted
    assert document["candidates"][0]["description"] == planted
    assert document["start"] == {"ref": "HEAD~1", "commit": commit}
    assert git(repository, "status", "--porcelain") == ""
