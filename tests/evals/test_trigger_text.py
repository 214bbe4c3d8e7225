"""A skill's trigger results said once: ``agent-skills eval --triggers`` prints the lines of
:func:`triggers_text` and the pytest item of ``evals/triggers.json`` fails with the same
lines, from the same recorded runs."""

from __future__ import annotations

import json

import pytest

from pytest_agent_skills.evals.triggers.trigger_text import triggers_text
from tests.support.evals import TRIGGERS, fake_endpoint, run_eval_command, write_eval_skill

pytest_plugins = ["pytester"]


def test_the_command_and_the_pytest_item_say_the_trigger_results_in_the_same_lines(
    pytester: pytest.Pytester,
) -> None:
    skill = write_eval_skill(pytester.path)
    pytester.makefile(
        ".toml",
        pyproject='[tool.pytest.ini_options]\nskills_model = "fake-agent"\nskills_eval_runs = 2\n'
        'skills_eval_runtime = "local"\nskills_eval_threshold = 0\n',
    )
    # Threshold 0: every should-trigger query passes, every should-not query fails.
    with fake_endpoint() as (_endpoint, url):
        done = run_eval_command(
            str(skill), "--triggers", "--record", "all", "--upstream-url", url, "-q",
            "--out", "out", cwd=pytester.path,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    document = json.loads((pytester.path / "out" / "triggers.json").read_text())
    text = triggers_text(document)
    should, should_not = document["results"]
    assert text.queries == (
        f"pass  rate {should['trigger_rate']:.2f} ({should['triggers']}/2), should trigger:"
        f" {TRIGGERS[0]['query']}",
        f"FAIL  rate {should_not['trigger_rate']:.2f} ({should_not['triggers']}/2), should not"
        f" trigger: {TRIGGERS[1]['query']}",
    )
    assert text.summary == "1 of 2 trigger queries pass"
    assert done.stdout.splitlines() == [*text.queries, "1 of 2 trigger queries pass; wrote out"]

    replayed = pytester.runpytest_subprocess(
        "skills/csv-stats/evals/triggers.json", "-p", "no:cacheprovider"
    )
    assert text.failure().splitlines() == [text.queries[1], text.summary]
    replayed.stdout.fnmatch_lines(["*_ triggers _*", *text.failure().splitlines(), "*1 failed*"])
