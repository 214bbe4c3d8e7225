"""A grader's pass counts only with a quote found in the run: graders on loopback servers that
pass everything with quotes of their own, through the real client, cassettes and workspaces;
--trust-grader; judge and agent apart."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.evals.report.write import write_report
from pytest_agent_skills.evals.run.grader import judged
from pytest_agent_skills.evals.run.quotes import checked, found, normalised, quotable
from pytest_agent_skills.evals.setup.judges import family, same_grader
from pytest_agent_skills.evals.suite.output_folder import write_benchmark
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from pytest_agent_skills.evals.verdicts.benchmark_md import benchmark_markdown
from tests.support.evals import (
    Behaviour,
    fake_endpoint,
    recording,
    replaying,
    run_eval_command,
    write_eval_skill,
    written,
)

#: What the inventing grader quotes for every expectation of every run.
INVENTED = "The mean is 3"


def _without_timestamp(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "metadata": {**document["metadata"], "timestamp": None}}


def _graded_by_model(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in run["expectations"] if not item["text"].startswith("{")]


def test_quotes_are_looked_for_in_the_agents_part_with_whitespace_and_case_normalised() -> None:
    transcript = (
        "[user] How much does acme owe?\nThe answer says acme owes 30.00\n"
        "[tool call] skill_run {}\n[tool result] grand total 55.0\n"
        "[final answer] Acme owes\n  30.00 in total."
    )
    text = quotable(transcript, '--- out/totals.json (9 bytes)\n{"acme": 30.0}')
    assert normalised("  A\n\tB  ") == "a b"
    assert found("acme OWES 30.00 in total", text)  # case and a line break between
    assert found('"grand total 55.0"', text)  # a tool result, quote marks stripped
    assert found('{"acme": 30.0}', text)  # an output file
    assert not found("the answer says acme owes 30.00", text)  # only in the user's message
    assert not found("30", text)  # too short to show anything
    graded = checked(
        [
            judged("kept", True, "e", quotes=("nowhere", "Acme owes 30.00")),
            judged("invented", True, "e", quotes=("acme owes 31.00",)),
            judged("no quote", True, "e"),
            judged("failed", False, "missing", quotes=()),
        ],
        text,
    )
    assert [(item.passed, item.supported) for item in graded] == [
        (True, True), (False, False), (False, False), (False, True)
    ]  # fmt: skip
    assert graded[1].evidence == (
        "unsupported: the grader passed it, but none of its quotes is in the run"
        " ('acme owes 31.00'); the grader's evidence: e"
    )
    assert graded[1].quotes == ["acme owes 31.00"]  # kept, to show what was not there
    assert "(no quote given)" in graded[2].evidence


def test_a_grader_passing_everything_with_invented_quotes_keeps_only_the_quoted_passes(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    behaviour = Behaviour(invented_quotes=[INVENTED])
    with fake_endpoint(behaviour) as (_endpoint, url):
        recorded = run_benchmark(EvalRequest(skill, recording(url, tmp_path)))
    document = written(recorded.document)
    runs = document["runs"]
    assert not any(run["error"] for run in runs)
    unsupported: dict[tuple[int, str], int] = {}
    for run in runs:
        final = run_final(recorded, run)
        quoted = INVENTED.lower() in final.lower()
        for item in _graded_by_model(run):
            # The grader passed every one: a pass stays where the answer has the quote.
            assert item["quotes"] == [INVENTED]
            assert (item["passed"], item["supported"]) == (quoted, quoted), final
        count = sum(item["supported"] is False for item in run["expectations"])
        assert run["result"]["unsupported"] == count
        key = (run["eval_id"], run["configuration"])
        unsupported[key] = unsupported.get(key, 0) + count
        # The code-checked expectation needs no quote.
        assert all(
            item["supported"] is True and item["quotes"] == []
            for item in run["expectations"]
            if item["text"].startswith("{")
        )
    assert 0 < sum(unsupported.values()) < sum(len(_graded_by_model(run)) for run in runs)
    for verdict in document["evals"]:
        assert verdict["unsupported_passes"] == {
            name: unsupported.get((verdict["eval_id"], name), 0)
            for name in ("with_skill", "without_skill")
        }
    for name in ("with_skill", "without_skill"):
        assert document["run_summary"][name]["unsupported_passes"] == sum(
            count for (_, configuration), count in unsupported.items() if configuration == name
        )
    total = sum(unsupported.values())
    counts = ", ".join(
        f"{name} {document['run_summary'][name]['unsupported_passes']}"
        for name in ("with_skill", "without_skill")
        if document["run_summary"][name]["unsupported_passes"]
    )
    assert (
        f"{total} of the grader's passes were unsupported (none of its quotes is in the run):"
        f" counted as failures ({counts})"
    ) in document["notes"]
    markdown = benchmark_markdown(recorded.document)
    assert "Unsupported passes (the grader passed them; none of its quotes is in the run):" in (
        markdown
    )
    assert markdown.count("| 'The mean is 3' |") == total

    replayed = run_benchmark(EvalRequest(skill, replaying(tmp_path)))
    assert _without_timestamp(written(replayed.document)) == _without_timestamp(document)

    out = tmp_path / "out"
    write_benchmark(out, replayed.document, replayed.runs, replayed.evals)
    page = html.unescape((write_report(out)).read_text())
    # The report counts them (its notes) and shows each with the quote that was not there.
    assert f"{total} of the grader's passes were unsupported" in page
    assert (
        "unsupported: the grader passed it, but none of its quotes is in the run ('The mean is 3')"
    ) in page
    grading = json.loads((out / "eval-2" / "without_skill" / "run-1" / "grading.json").read_text())
    # skill-creator's fields keep their names and meaning; quotes and supported beside them.
    assert set(grading["expectations"][0]) == {"text", "passed", "evidence", "quotes", "supported"}


def run_final(outcome: Any, run: dict[str, Any]) -> str:
    (result,) = [
        item
        for item in outcome.runs
        if (item.key.eval_id, item.key.configuration, item.key.run_number)
        == (run["eval_id"], run["configuration"], run["run_number"])
    ]
    return str(result.transcript.get("final_text") or "")


def test_trust_grader_takes_the_passes_unchecked_and_says_so(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    behaviour = Behaviour(invented_quotes=[INVENTED])
    with fake_endpoint(behaviour) as (_endpoint, url):
        outcome = run_benchmark(
            EvalRequest(skill, recording(url, tmp_path, runs=2, trust_grader=True))
        )
    document = written(outcome.document)
    graded = [item for run in document["runs"] for item in _graded_by_model(run)]
    assert graded and all(item["passed"] and item["supported"] is None for item in graded)
    assert document["run_summary"]["with_skill"]["unsupported_passes"] == 0
    assert document["metadata"]["trust_grader"] is True
    trusted = (
        "--trust-grader: the grader's passes were taken as it gave them, its quotes not checked"
        " against the runs"
    )
    assert trusted in document["notes"]
    out = tmp_path / "out"
    write_benchmark(out, outcome.document, outcome.runs, outcome.evals)
    assert trusted in html.unescape(write_report(out).read_text())


def test_judge_and_agent_apart_by_model_and_family_name() -> None:
    assert same_grader("gpt-4o", "gpt-4o") == "the grader 'gpt-4o' is the agent's own model"
    assert same_grader("openai/gpt-4o", "o3-mini") == (
        "the grader 'o3-mini' is of the same family as the agent 'openai/gpt-4o' (OpenAI GPT)"
    )
    assert same_grader("claude-3-5-haiku", "gpt-4o-mini") == ""
    assert family("meta-llama/Llama-3.1-8B-Instruct") == family("llama3.2") == "Meta Llama"
    assert family("fake-agent") is None and same_grader("fake-agent", "fake-grader") == ""


def test_require_better_with_a_judge_of_the_agents_family_asks_for_allow_same_grader(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    refused = run_eval_command(
        str(skill), "--model", "gpt-4o", "--grader-model", "gpt-4o-mini", "--require", "better",
        "--runtime", "local", "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (
        "command line (--require): --require better with the grader 'gpt-4o-mini' is of the same"
        " family as the agent 'gpt-4o' (OpenAI GPT): a judge of its own family may favour it;"
        " name a grader of another family (--grader-model) or allow it with --allow-same-grader"
        " (skills_eval_allow_same_grader)"
    ) in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = run_eval_command(
        str(skill), "--model", "gpt-4o", "--grader-model", "gpt-4o-mini", "--require", "better",
        "--allow-same-grader", "--runtime", "local", "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.parametrize(
    ("command", "ini"),
    [
        ("eval", "skills_eval_trust_grader"),
        ("eval", "skills_eval_allow_same_grader"),
        ("eval", "skills_eval_grader_check"),
        ("grader-check", "skills_eval_trust_grader"),
        ("grader-check", "skills_grader_check_max_false_pass"),
        ("grader-check", "skills_grader_model"),
        ("grader-check", "skills_eval_grader_runs"),
    ],
)
def test_the_grader_flags_come_from_their_settings(command: str, ini: str) -> None:
    from pytest_agent_skills.cli import build_parser
    from pytest_agent_skills.settings import REGISTRY

    setting = REGISTRY[ini]
    subparsers = build_parser(command, alone=True)._subparsers
    assert subparsers is not None
    parser = subparsers._group_actions[0].choices[command]  # type: ignore[index]
    flag = setting.command_flag_name
    (action,) = [item for item in parser._actions if flag in item.option_strings]
    assert action.help is not None and action.help.startswith(setting.help[:40])


def test_the_command_counts_the_unsupported_passes_of_each_configuration(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    with fake_endpoint(Behaviour(invented_quotes=[INVENTED])) as (_endpoint, url):
        done = run_eval_command(
            str(skill), "--record", "all", "--upstream-url", url, "--model", "fake-agent",
            "--grader-model", "fake-grader", "--runs", "2", "--runtime", "local",
            "--min-pass-rate", "0", "-q", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "evals-out" / "benchmark.json").read_text())
    counts = ", ".join(
        f"{name} {document['run_summary'][name]['unsupported_passes']}"
        for name in ("with_skill", "without_skill")
        if document["run_summary"][name]["unsupported_passes"]
    )
    assert counts
    assert (  # the words of benchmark.json's note
        f"of the grader's passes were unsupported (none of its quotes is in the run): counted as"
        f" failures ({counts})\n"
    ) in done.stdout
