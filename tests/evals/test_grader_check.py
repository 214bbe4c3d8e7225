"""``agent-skills grader-check``: the shipped gold set, graders of known policies on loopback
ports recorded and replayed offline, the figures they get, the exit statuses, the document and
its schema, and ``eval --grader-check``."""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from pytest_agent_skills.evals.documents.catalog import schema_file, schema_of
from pytest_agent_skills.evals.suite.grader_check import GraderCheck, load_gold
from tests.support.evals import fake_endpoint, run_eval_command, write_eval_skill
from tests.support.graders import policy_grader

GOLD = load_gold()
MUST_FAIL = [case for case in GOLD.cases if not case.truth]
MUST_PASS = [case for case in GOLD.cases if case.truth]


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``agent-skills grader-check ARGS`` as a user runs it."""
    return run_eval_command(*args, cwd=cwd, command="grader-check")


def _recorded(policy: str, tmp_path: Path, *args: str) -> tuple[Any, dict[str, Any]]:
    """A grader of ``policy`` on the gold set, recorded, then replayed offline: the replay's
    process and its figures (the same as the recording's)."""
    common = ["--grader-model", f"{policy}-grader", "--format", "json", "-q", *args]
    with policy_grader(policy) as (grader, url):
        recorded = _check(*common, "--record", "all", "--upstream-url", url, cwd=tmp_path)
    assert recorded.returncode in (0, 1), recorded.stderr
    assert grader.requests == len(GOLD.cases) * (2 if "--grader-runs" in args else 1)
    replayed = _check(*common, cwd=tmp_path)  # no upstream: the cassettes alone
    assert replayed.returncode == recorded.returncode, replayed.stderr
    assert replayed.stdout == recorded.stdout
    return replayed, json.loads(replayed.stdout)


def test_the_gold_set_has_thirty_cases_a_third_and_more_must_fail_of_every_kind() -> None:
    assert len(GOLD.cases) >= 30
    assert len(MUST_FAIL) * 3 >= len(GOLD.cases)
    assert len({case.id for case in GOLD.cases}) == len(GOLD.cases)
    assert {case.kind for case in MUST_FAIL} >= {
        "claim without evidence",
        "right name, wrong content",
        "partial completion",
        "restated question",
        "tool result only",
    }
    for case in GOLD.cases:
        assert case.transcript and all(
            line.startswith(("[assistant] ", "[tool call] ", "[tool result", "[final answer] "))
            for line in case.transcript
        ), case.id


def test_a_credulous_grader_passes_every_must_fail_case_and_exits_1(tmp_path: Path) -> None:
    replayed, figures = _recorded("credulous", tmp_path)
    assert replayed.returncode == 1
    assert {"items", "accuracy", "false_pass_rate", "false_fail_rate", "unsupported_rate"} <= set(
        figures
    )
    assert figures["items"] == len(GOLD.cases)
    # It quotes the run's last line, which is there: every pass is supported, so every
    # must-fail case is a false pass.
    assert figures["false_pass_rate"] == 1.0
    assert figures["false_fail_rate"] == 0.0
    assert figures["unsupported_rate"] == 0.0
    assert figures["accuracy"] == round(len(MUST_PASS) / len(GOLD.cases), 4)
    Draft202012Validator(json.loads(schema_of(GraderCheck, "grader-check"))).validate(figures)
    assert figures["$schema"].endswith("/grader-check.schema.json")


def test_a_grader_inventing_its_quotes_has_every_pass_unsupported(tmp_path: Path) -> None:
    replayed, figures = _recorded("inventing", tmp_path)
    assert replayed.returncode == 0  # no pass stood: no false pass
    assert figures["unsupported_rate"] == 1.0
    assert figures["false_pass_rate"] == 0.0 and figures["false_fail_rate"] == 1.0
    assert all(case["supported"] is False for case in figures["cases"])

    (tmp_path / "trusted").mkdir()
    trusting, trusted = _recorded("inventing", tmp_path / "trusted", "--trust-grader")
    assert trusting.returncode == 1  # its passes taken as given: every must-fail one is false
    assert trusted["false_pass_rate"] == 1.0 and trusted["unsupported_rate"] == 0.0
    assert trusted["trust_grader"] is True


def test_a_grader_that_agrees_with_the_gold_set_scores_one_and_agrees_with_itself(
    tmp_path: Path,
) -> None:
    replayed, figures = _recorded("gold", tmp_path, "--grader-runs", "2", "--max-false-pass", "0")
    assert replayed.returncode == 0
    assert (figures["accuracy"], figures["false_pass_rate"], figures["false_fail_rate"]) == (
        1.0, 0.0, 0.0
    )  # fmt: skip
    assert figures["self_agreement"] == 1.0 and figures["grader_runs"] == 2
    text = _check("--grader-model", "gold-grader", "--grader-runs", "2", "-q", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert f"grader gold-grader on {len(GOLD.cases)} gold cases (2 grading(s) each):" in text.stdout
    assert "  false-pass rate  0.00 (at most 0.10)" in text.stdout
    assert "  self-agreement   1.00" in text.stdout


def test_the_text_report_names_each_wrong_verdict(tmp_path: Path) -> None:
    with policy_grader("credulous") as (_grader, url):
        done = _check("--grader-model", "credulous-grader", "--record", "all", "-q",
                      "--upstream-url", url, "--out", "check.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    first = MUST_FAIL[0]
    assert (
        f"  case {first.id} ({first.kind}): passed, should have failed: {first.expectation}"
    ) in done.stdout
    assert done.stdout.rstrip().endswith("false-pass rate 1.00 is ABOVE --max-false-pass 0.10")
    written = json.loads((tmp_path / "check.json").read_text())
    assert GraderCheck.model_validate(written).false_pass_rate == 1.0


def test_the_shipped_schema_is_the_one_the_model_generates() -> None:
    schema = schema_of(GraderCheck, "grader-check")
    assert schema_file("grader-check").read_text(encoding="utf-8") == schema, (
        "schemas/grader-check.schema.json is stale: write schema_of(GraderCheck) into it"
    )
    Draft202012Validator.check_schema(json.loads(schema))


def test_a_gold_set_that_is_not_one_is_refused_with_the_file_and_the_path(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "gold.json"
    bad.write_text(json.dumps({"cases": [{"id": 1, "kind": "met", "prompt": "p"}]}))
    refused = _check("--gold", str(bad), "--grader-model", "g", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"{bad}: cases.0.transcript: Field required" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_replay_without_the_recording_says_how_to_record(tmp_path: Path) -> None:
    missing = _check("--grader-model", "never-recorded", "-q", cwd=tmp_path)
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert (
        "The gradings of the gold set by 'never-recorded' are not recorded as asked: record"
        " them with --record new and --upstream-url"
    ) in missing.stderr
    assert "Traceback" not in missing.stderr


def test_eval_grader_check_writes_the_graders_figures_into_the_benchmark(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    with fake_endpoint() as (_endpoint, url):
        done = run_eval_command(
            str(skill), "--grader-check", "--record", "all", "--upstream-url", url,
            "--model", "fake-agent", "--grader-model", "fake-grader", "--runs", "1",
            "--runtime", "local", "--min-pass-rate", "0", "-q", "--eval", "2", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((tmp_path / "evals-out" / "benchmark.json").read_text())
    check = document["metadata"]["grader_check"]
    # The same figures as grader-check itself gives, from the gradings the eval recorded.
    alone = _check("--grader-model", "fake-grader", "--format", "json", "-q", cwd=tmp_path)
    assert alone.returncode in (0, 1), alone.stderr
    assert check == GraderCheck.model_validate_json(alone.stdout).figures()
    assert check["items"] == len(GOLD.cases) and "cases" not in check
    shown = (
        f"The grader on the gold set ({check['items']} cases): accuracy {check['accuracy']:.2f},"
        f" false passes {check['false_pass_rate']:.2f}, false fails"
        f" {check['false_fail_rate']:.2f}, unsupported {check['unsupported_rate']:.2f}"
    )
    assert shown in document["notes"]
    assert f"- {shown}" in (tmp_path / "evals-out" / "benchmark.md").read_text()
    assert shown in html.unescape((tmp_path / "evals-out" / "report.html").read_text())
    assert f"{shown}\n" in done.stdout  # the command says it in the note's words
