"""improve-description against the word-overlap loopback model: a planted bad description
gets better on the held-out queries, no held-out query ever reaches the model, a recording
replays offline to the same candidates, and the command writes only the description."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.support.routing import agent_skills, word_overlap_endpoint, write_repository
from pytest_agent_skills.evals.documents.triggers import Passed
from pytest_agent_skills.evals.setup.eval_files import TriggerQuery
from pytest_agent_skills.evals.triggers.improve import (
    Candidate,
    ImproveError,
    ImproveRequest,
    Numbered,
    improve_description,
    split,
)
from tests.support.evals import recording, replaying, written
from tests.support.harness import only_loopback

PLANTED = "Helps with data."
SKILLS = {
    "csv-stats": (
        PLANTED,  # shares no word with what the skill is for, and "data" with its near misses
        [
            ("mean of the value column in my csv file", True),
            ("median of a csv column", True),
            ("csv column statistics", True),
            ("average value of a csv file", True),
            ("standard deviation of csv values", True),
            ("summary statistics for this csv", True),
            ("edit the spreadsheet formulas", False),
            ("write my meeting notes", False),
            ("a poem about data", False),
            ("translate this data sheet to french", False),
        ],
    ),
    "notes": ("Keeps meeting notes and minutes.", []),
    "sheet-tools": ("Edits spreadsheet formulas and cells.", []),
}


def _shares(document: dict[str, Any], part: str) -> list[float]:
    return [
        item[part]["passed"] / item[part]["total"]
        for item in document["candidates"]
        if item[part] is not None
    ]


def _improve(skills: Path, options: Any) -> Any:
    return improve_description(ImproveRequest(skills / "csv-stats", options, seed=1))


def test_a_planted_bad_description_improves_on_held_out_queries_it_never_showed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skills = write_repository(tmp_path, SKILLS)
    with word_overlap_endpoint() as (model, url):
        outcome = _improve(skills, recording(url, tmp_path, runs=2))
    document = written(outcome.document)
    original, *later = document["candidates"]
    assert original["iteration"] == 0 and original["description"] == PLANTED
    assert original["test"]["passed"] / original["test"]["total"] < 0.5
    best = next(item for item in later if item["description"] == document["best"])
    assert best["test"]["passed"] / best["test"]["total"] > (
        original["test"]["passed"] / original["test"]["total"]
    )
    assert max(_shares(document, "test")) == best["test"]["passed"] / best["test"]["total"]
    assert document["best"] != PLANTED and len(document["best"]) <= 1024
    # 6 should-trigger and 4 should-not queries, 0.4 of each held out.
    assert (len(document["train_queries"]), len(document["test_queries"])) == (6, 4)

    asked = [
        json.dumps(body)
        for body in model.bodies
        if "<current-description>" in body["messages"][-1]["content"]
    ]
    assert 1 <= len(asked) == len(later)
    for held_out in document["test_queries"]:
        assert not any(held_out in request for request in asked), held_out
    shown_failures = [query for query in document["train_queries"] if query in asked[0]]
    assert shown_failures  # the train split's failures were shown

    with only_loopback(monkeypatch) as off_loopback:
        replayed = _improve(skills, replaying(tmp_path, runs=2))
    assert off_loopback == []
    assert written(replayed.document) == document


def test_the_split_is_stratified_and_seeded() -> None:
    queries = [Numbered(index, TriggerQuery(f"q{index}", index <= 6)) for index in range(1, 11)]
    train, test = split(queries, 0.4, seed=1)
    assert [item.query.should_trigger for item in test].count(True) == 2
    assert [item.query.should_trigger for item in test].count(False) == 2
    assert {item.index for item in train} | {item.index for item in test} == set(range(1, 11))
    assert split(queries, 0.4, seed=1) == (train, test)
    assert split(queries, 0.4, seed=2) != (train, test)


def test_a_candidate_lists_refused_only_when_it_was_refused() -> None:
    scored = Candidate(1, "Computes csv statistics.", Passed(passed=5, total=6), None)
    refused = Candidate(2, "Computes csv statistics.", refused="the same as candidate 1")
    assert "refused" not in scored.entry().model_dump(exclude_unset=True)
    assert refused.entry().model_dump(exclude_unset=True) == {
        "iteration": 2,
        "description": "Computes csv statistics.",
        "train": None,
        "test": None,
        "refused": "the same as candidate 1",
    }


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    skills = write_repository(tmp_path, SKILLS)
    with pytest.raises(ImproveError, match=r"--holdout is a share between 0 and 1, got 1\.5"):
        improve_description(ImproveRequest(skills / "csv-stats", replaying(tmp_path), 1.5))


def test_the_command_prints_the_best_and_writes_only_the_description(tmp_path: Path) -> None:
    skills = write_repository(tmp_path, SKILLS)
    skill_file = skills / "csv-stats" / "SKILL.md"
    before = skill_file.read_bytes()
    with word_overlap_endpoint() as (_model, url):
        done = agent_skills(
            "improve-description",
            "skills/csv-stats", "--record", "all", "--upstream-url", url, "--model", "m",
            "--runs", "2", "--seed", "1", "--write", "-q", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "improve-out" / "description-candidates.json").read_text())
    assert f"best (candidate {document['best_iteration']}):\n{document['best']}\n" in done.stdout
    assert (
        "Description candidates of csv-stats"
        in (tmp_path / "improve-out" / "report.html").read_text()
    )
    after = skill_file.read_bytes()
    old_line = f"description: {json.dumps(PLANTED)}".encode()
    assert after.replace(after.split(b"\n")[2], old_line) == before
    assert document["best"] in after.decode()


def test_the_token_budget_counts_every_exchange_of_the_loop(tmp_path: Path) -> None:
    skills = write_repository(tmp_path, SKILLS)
    with word_overlap_endpoint() as (_model, url):
        whole = written(_improve(skills, recording(url, tmp_path, runs=2)).document)
    assert whole["tokens"] > 0 and whole["max_tokens"] is None
    # Replayed answers count too: one token stops it after the first run.
    with pytest.raises(ImproveError, match=r"the token budget \(\d+ of 1 tokens, --max-tokens\)"):
        _improve(skills, replaying(tmp_path, runs=2, jobs=1, max_tokens=1))
    replayed = _improve(skills, replaying(tmp_path, runs=2, max_tokens=whole["tokens"]))
    assert written(replayed.document) == {
        **whole,
        "max_tokens": whole["tokens"],
    }


def test_a_dry_run_prints_the_split_and_every_round_and_asks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    skills = write_repository(tmp_path, SKILLS)
    before = {path: path.read_bytes() for path in skills.rglob("*") if path.is_file()}
    with word_overlap_endpoint() as (model, url):
        planned = agent_skills(
            "improve-description",
            "skills/csv-stats", "--dry-run", "--record", "all", "--upstream-url", url,
            "--model", "m", "--runs", "1", "--seed", "1", "--iterations", "1",
            "--max-tokens", "5000", "--write", cwd=tmp_path,
        )  # fmt: skip
    assert model.bodies == []
    assert planned.returncode == 0, planned.stderr
    # Seed 1 holds out queries 3 and 5 (should trigger), 9 and 10 (should not).
    train, held_out = (1, 2, 4, 6, 7, 8), (3, 5, 9, 10)
    queries = [query for query, _should in SKILLS["csv-stats"][1]]

    def runs(candidate: int) -> list[str]:
        return [
            f"  candidate {candidate} {part} query {index} run 1: at most 30 request(s), not"
            f" recorded: {queries[index - 1]}"
            for part, indexes in (("train", train), ("held-out", held_out))
            for index in indexes
        ]

    assert planned.stdout.splitlines() == [
        "dry run: description loop of csv-stats: 21 conversation(s), no request made",
        *runs(0),
        "  round 1: at most 1 request(s), not recorded: a new description from the current one,"
        " the body and the train failures",
        *runs(1),
        "at most 601 model request(s) in all; 0 of 21 conversation(s) recorded, 0 tokens",
        "split: 6 train queries (4 should trigger, 2 should not), 4 held out (2 should trigger,"
        " 2 should not); --holdout 0.4, --seed 1; no held-out query is shown in a round's"
        " request",
        "rounds: at most 1 (--iterations), each 1 request and its candidate's 10 trigger runs;"
        " the loop stops early once the train part passes whole",
        "requests: at most 30 model turns a run (--max-turns); each sent up to 5 times when the"
        " endpoint asks again (--attempts)",
        "budgets: no cap a run (--max-run-tokens), 5000 tokens in all (--max-tokens)",
        "record mode all, model m",
    ]
    numbered = [
        Numbered(index, TriggerQuery(query, should))
        for index, (query, should) in enumerate(SKILLS["csv-stats"][1], 1)
    ]
    parts = split(numbered, 0.4, seed=1)
    assert tuple(tuple(item.index for item in part) for part in parts) == (train, held_out)
    after = {path: path.read_bytes() for path in skills.rglob("*") if path.is_file()}
    assert after == before  # --write wrote nothing
    assert sorted(path.name for path in tmp_path.iterdir()) == ["skills"]


def test_the_command_line_budget_bounds_the_loop(tmp_path: Path) -> None:
    skills = write_repository(tmp_path, SKILLS)
    with word_overlap_endpoint() as (_model, url):
        _improve(skills, recording(url, tmp_path, runs=2))
    cut = agent_skills(
        "improve-description", "skills/csv-stats", "--runs", "2", "--seed", "1", "--jobs", "1",
        "--max-tokens", "1", "--model", "fake-agent", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert cut.returncode == 2
    assert "the token budget (" in cut.stderr and "of 1 tokens, --max-tokens)" in cut.stderr
