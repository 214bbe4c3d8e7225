"""The repository-wide trigger matrix against a loopback model that loads skills by word
overlap: its counts, precision, recall and collisions against a hand computation, recorded
and replayed offline, and ``agent-skills triggers`` as a user runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.support.routing import agent_skills, timeless, word_overlap_endpoint, write_repository
from pytest_agent_skills.evals.suite.suite_runner import EvalSetupError
from pytest_agent_skills.evals.triggers.matrix import (
    MatrixBars,
    MatrixOutcome,
    MatrixRequest,
    run_matrix,
)
from pytest_agent_skills.evals.verdicts.matrix_text import matrix_text
from tests.support.evals import recording, replaying, written
from tests.support.harness import only_loopback

pytest_plugins = ["pytester"]

# Words that count (three letters or more, no stopword) decide: see bench/support/routing.py.
SKILLS = {
    "csv-tools": (
        "Reads csv tables and computes column statistics.",
        [
            ("compute statistics of my csv", True),  # csv-tools 2 words: always csv-tools
            ("sum a column of the tables", True),  # csv-tools and sheet-tools 2 each: a tie
            ("write a poem", False),  # no word shared: none
        ],
    ),
    "notes": ("Keeps meeting notes.", []),  # no triggers.json: offered, never an owner
    "pdf-tools": (
        "Extracts text from pdf documents.",
        [
            ("extract text from a pdf", True),  # pdf-tools 2 words
            ("summarize meeting notes documents", True),  # notes 2, pdf-tools 1: notes
            ("meeting notes please", False),  # notes: another skill, not judged
        ],
    ),
    "sheet-tools": (
        "Edits spreadsheet tables and column formulas.",
        [
            ("fix spreadsheet formulas", True),  # sheet-tools 2 words
            ("open the csv tables", True),  # csv-tools 2, sheet-tools 1: taken by csv-tools
            ("edits column", False),  # sheet-tools 2: loads itself on its near miss
        ],
    ),
}

# By hand, 4 runs a query (a tie of two splits them 2 and 2):
# csv-tools: should-trigger runs 8, hits 4 + 2 = 6 -> recall 0.75; loads: its 6 hits, and the
#   4 runs of sheet-tools' "open the csv tables" -> precision 6 / 10 = 0.6; of its queries, 2
#   runs went to sheet-tools.
# sheet-tools: 8 should-trigger runs, 4 hits -> recall 0.5; loads: 4 hits, 2 of csv-tools'
#   tie, 4 of its own near miss -> precision 4 / 10 = 0.4; its should-trigger queries went to
#   csv-tools (4); its near miss loaded itself (4): its own false triggers, not ones "to" it.
# pdf-tools: 8 runs, 4 hits -> recall 0.5; loaded only on its hits -> precision 1.0; 4 runs
#   went to notes.
# notes: no should-trigger query -> recall None; loaded wrongly on pdf-tools' query 4 times
#   (its near miss "meeting notes please" is not judged) -> precision 0.0.
HAND = {
    "csv-tools": (0.6, 0.75, {"sheet-tools": 2}, 0),
    "sheet-tools": (0.4, 0.5, {"csv-tools": 4}, 4),
    "pdf-tools": (1.0, 0.5, {"notes": 4}, 0),
    "notes": (0.0, None, {}, 0),
}
LOADED = [  # in the skills' order (by name), each skill's queries in its file's order
    {"csv-tools": 4},
    {"csv-tools": 2, "sheet-tools": 2},
    {"none": 4},
    {"pdf-tools": 4},
    {"notes": 4},
    {"notes": 4},
    {"sheet-tools": 4},
    {"csv-tools": 4},
    {"sheet-tools": 4},
]


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    return write_repository(tmp_path, SKILLS)


def _record(skills: Path, **changes: Any) -> tuple[Any, Any]:
    with word_overlap_endpoint() as (model, url):
        options = recording(url, skills.parent, runs=4, jobs=3, **changes)
        return model, run_matrix(MatrixRequest((skills,), options))


def test_counts_scores_and_collisions_match_a_hand_computation(
    skills: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, outcome = _record(skills)
    document = written(outcome.document)
    assert len(model.bodies) == 9 * 4  # one request a run: it ends at the first load
    assert document["skills"] == ["csv-tools", "notes", "pdf-tools", "sheet-tools"]
    assert [query["loaded"] for query in document["queries"]] == LOADED
    assert [(query["owner"], query["should_trigger"]) for query in document["queries"]] == [
        (owner, should) for owner, (_text, queries) in SKILLS.items() for _query, should in queries
    ]
    for name, (precision, recall, went, own) in HAND.items():
        score = document["per_skill"][name]
        assert (
            score["precision"],
            score["recall"],
            score["false_triggers"],
            score["own_false_triggers"],
        ) == (precision, recall, went, own), name
    assert document["per_skill"]["sheet-tools"]["took_from"] == {"csv-tools": 2}
    assert document["summary"]["runs_skipped"] == 0 and document["summary"]["errors"] == 0
    assert all(query["skipped"] == 0 and query["runs"] == 4 for query in document["queries"])
    assert 0 < document["summary"]["time_seconds"] < 300
    assert document["collisions"] == [
        {"a": "csv-tools", "b": "sheet-tools", "count": 6, "a_took_b": 4, "b_took_a": 2},
        {"a": "notes", "b": "pdf-tools", "count": 4, "a_took_b": 4, "b_took_a": 0},
    ]
    assert document["summary"]["below_bar"] == {
        "notes": ["precision 0.00 < 0.5"],
        "sheet-tools": ["precision 0.40 < 0.5"],
    }
    text = matrix_text(outcome.document)  # the command prints it, the pytest item fails with it
    assert text.skills == (
        "ok    csv-tools: recall 0.75 (6/8), precision 0.60; false triggers: sheet-tools 2",
        "FAIL  notes: recall - (0/0), precision 0.00",
        "ok    pdf-tools: recall 0.50 (4/8), precision 1.00; false triggers: notes 4",
        "FAIL  sheet-tools: recall 0.50 (4/8), precision 0.40; false triggers: csv-tools 4,"
        " its own should-not queries 4",
    )
    assert text.failed and text.failure().splitlines() == [
        text.skills[1],
        text.skills[3],
        "collision: csv-tools <-> sheet-tools: 6 runs (csv-tools took 4, sheet-tools took 2)",
        "collision: notes <-> pdf-tools: 4 runs (notes took 4, pdf-tools took 0)",
        "4 skills, 9 queries, 36 runs; 2 skill(s) below a bar (recall 0.5, precision 0.5)",
    ]
    # Every skill is offered in every run, as the agent sees them.
    system = model.bodies[0]["messages"][0]["content"]
    assert all(f"- {name}: {SKILLS[name][0]}" in system for name in SKILLS)

    with only_loopback(monkeypatch) as off_loopback:
        replayed = run_matrix(MatrixRequest((skills,), replaying(skills.parent, runs=4)))
    assert off_loopback == []
    assert timeless(replayed.document) == timeless(outcome.document)
    cassette = skills.parent / "eval-cassettes" / "sheet-tools" / "triggers-matrix" / "query-2"
    assert sorted(path.name for path in cassette.iterdir()) == [
        f"run-{number}.json" for number in range(1, 5)
    ]


def below_bar(outcome: MatrixOutcome) -> dict[str, list[str]]:
    """The skills below a bar in the matrix document, with what falls short."""
    below: dict[str, list[str]] = written(outcome.document)["summary"]["below_bar"]
    return below


def test_bars_decide_who_falls_short(skills: Path) -> None:
    _record(skills)
    strict = MatrixRequest((skills,), replaying(skills.parent, runs=4), MatrixBars(0.8, 0.8))
    assert set(below_bar(run_matrix(strict))) == {"csv-tools", "sheet-tools", "pdf-tools", "notes"}
    lax = MatrixRequest((skills,), replaying(skills.parent, runs=4), MatrixBars(0.0, 0.0))
    assert below_bar(run_matrix(lax)) == {}


def test_a_description_changed_since_the_recording_is_an_error_of_every_run(
    skills: Path,
) -> None:
    _record(skills)
    skill_file = skills / "notes" / "SKILL.md"
    skill_file.write_text(skill_file.read_text().replace("Keeps meeting", "Keeps team"))
    outcome = run_matrix(MatrixRequest((skills,), replaying(skills.parent, runs=4)))
    summary = written(outcome.document)["summary"]
    assert summary["errors"] == summary["runs"] == 36
    first = written(outcome.document)["queries"][0]
    assert first["loaded"] == {} and "cassette" in first["error_messages"][0].lower()
    errors = matrix_text(outcome.document).errors
    assert errors == (
        "36 of 36 runs failed; first (csv-tools: 'compute statistics of my csv'):\n"
        + first["error_messages"][0]
    )


def test_a_repository_without_trigger_queries_or_with_a_name_twice_is_refused(
    tmp_path: Path,
) -> None:
    bare = write_repository(tmp_path / "bare", {"notes": ("Keeps notes.", [])})
    with pytest.raises(EvalSetupError, match=r"none of the 1 skill\(s\) found has"):
        run_matrix(MatrixRequest((bare,), replaying(tmp_path)))
    other = write_repository(tmp_path / "other", {"notes": ("Other notes.", [("x", True)])})
    with pytest.raises(EvalSetupError, match="two skills are named 'notes'"):
        run_matrix(MatrixRequest((bare, other), replaying(tmp_path)))


def test_the_command_records_replays_and_exits_by_the_bars(skills: Path, tmp_path: Path) -> None:
    with word_overlap_endpoint() as (_model, url):
        recorded = agent_skills(
            "triggers",
            "skills", "--record", "all", "--upstream-url", url, "--model", "fake-agent",
            "--runs", "4", "--out", "recorded", cwd=tmp_path,
        )  # fmt: skip
    assert recorded.returncode == 1, recorded.stderr  # two skills below the bars
    assert "[36/36] trigger matrix of 4 skills:" in recorded.stderr
    assert (
        "FAIL  sheet-tools: recall 0.50 (4/8), precision 0.40;"
        " false triggers: csv-tools 4, its own should-not queries 4"
    ) in recorded.stdout
    assert "36 runs; 2 skill(s) below a bar (recall 0.5, precision 0.5)" in recorded.stdout
    assert "collision: csv-tools <-> sheet-tools: 6 runs" in recorded.stdout
    document = json.loads((tmp_path / "recorded" / "triggers-matrix.json").read_text())
    page = (tmp_path / "recorded" / "report.html").read_text()
    assert "Which skill fires" in page
    row = re.search(r'<tr class="skill-score[^"]*"><th scope="row">sheet-tools</th>.*?</tr>', page)
    assert row is not None
    assert (
        '<td class="false-triggers">csv-tools 4, its own should-not queries 4</td>'  # as printed
        in row.group(0)
    )
    assert re.search(r"4 skills, 9 queries, 4 runs each, fake-agent, \d+\.\d s\.", page)
    assert "skipped" not in page

    # No path: what a bare pytest here collects (the skills folder).
    replayed = agent_skills(
        "triggers", "--runs", "4", "--model", "fake-agent", "--out", "replayed",
        "--min-precision", "0", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr + replayed.stdout
    assert replayed.stderr == ""
    again = json.loads((tmp_path / "replayed" / "triggers-matrix.json").read_text())
    assert again["per_skill"] == document["per_skill"] and again["min_precision"] == 0

    wrong = agent_skills("triggers", "skills", "--min-recall", "2", cwd=tmp_path)
    assert wrong.returncode == 2
    assert (
        "command line (--min-recall): --skills-trigger-min-recall is a rate from 0 to 1, got 2.0"
        in wrong.stderr
    )


def test_a_bad_matrix_setting_fails_the_item_with_the_file_and_the_fix(
    pytester: pytest.Pytester,
) -> None:
    write_repository(pytester.path, SKILLS)
    ini = pytester.makefile(
        ".ini", pytest="[pytest]\nskills_trigger_matrix = true\nskills_trigger_min_recall = 2\n"
    )
    result = pytester.runpytest_subprocess("skills", "-k", "matrix", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            "*_ skills trigger matrix _*",
            f"{ini}: skills_trigger_min_recall: --skills-trigger-min-recall is a rate from 0 to"
            " 1, got 2.0",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    result.assert_outcomes(failed=1, deselected=result.parseoutcomes()["deselected"])


def test_pytest_runs_the_matrix_as_one_item_when_asked(pytester: pytest.Pytester) -> None:
    skills = write_repository(pytester.path, SKILLS)
    pytester.makefile(".ini", pytest="[pytest]\nskills_trigger_matrix = true\n")
    with word_overlap_endpoint() as (_model, url):
        run_matrix(MatrixRequest((skills,), recording(url, pytester.path, runs=4)))
    failed = pytester.runpytest_subprocess(
        "skills",
        "-k",
        "matrix",
        "--skills-eval-runs=4",
        "--skills-model=fake-agent",
        "-p",
        "no:cacheprovider",
        "-v",
    )
    failed.stdout.fnmatch_lines(
        [
            "*::skills trigger matrix FAILED*",
            "FAIL  notes: recall - (0/0), precision 0.00",
            "FAIL  sheet-tools: recall 0.50 (4/8), precision 0.40; false triggers: csv-tools 4,"
            " its own should-not queries 4",
            "collision: csv-tools <-> sheet-tools: 6 runs (csv-tools took 4, sheet-tools took 2)",
            "collision: notes <-> pdf-tools: 4 runs (notes took 4, pdf-tools took 0)",
            "4 skills, 9 queries, 36 runs; 2 skill(s) below a bar (recall 0.5, precision 0.5)",
            "*1 failed, * deselected*",
        ]
    )
    assert failed.ret == 1
    passed = pytester.runpytest_subprocess(
        "skills", "-k", "matrix", "--skills-eval-runs=4", "--skills-trigger-min-precision=0",
        "--skills-model=fake-agent",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    passed.stdout.fnmatch_lines(["*1 passed, * deselected*"])
    pytester.makefile(".ini", pytest="[pytest]\n")
    off = pytester.runpytest_subprocess("skills", "-k", "matrix", "-p", "no:cacheprovider")
    off.stdout.fnmatch_lines(["*= 7 deselected in *"])  # the SKILL.md and triggers.json items
    assert "trigger matrix" not in off.stdout.str()


def test_runs_past_the_token_budget_are_skipped_apart_from_errors(skills: Path) -> None:
    _record(skills)
    options = replaying(skills.parent, runs=4, jobs=1, max_tokens=1)
    matrix = run_matrix(MatrixRequest((skills,), options)).document
    document = written(matrix)
    summary = document["summary"]
    # One run is made, and its tokens spend the budget: the 35 others never start.
    assert (summary["runs"], summary["errors"], summary["runs_skipped"]) == (1, 0, 35)
    first, *others = document["queries"]
    assert (first["runs"], first["skipped"], first["errors"], first["loaded"]) == (
        1, 3, 0, {"csv-tools": 1},
    )  # fmt: skip
    assert first["error_messages"] == []
    assert all((query["runs"], query["skipped"]) == (0, 4) for query in others)
    assert document["per_skill"]["csv-tools"]["should_trigger_runs"] == 1
    text = matrix_text(matrix)
    assert text.failed and not text.errors
    assert text.skipped == (
        "35 of 36 runs were never started: the token budget (--max-tokens) was spent; neither"
        " judged nor errors; 8 quer(ies) with no run made fail"
    )


def test_the_command_counts_skipped_runs_apart_and_fails_queries_never_measured(
    skills: Path, tmp_path: Path
) -> None:
    _record(skills)
    cut = agent_skills(
        "triggers", "skills", "--runs", "4", "--jobs", "1", "--max-tokens", "1",
        "--model", "fake-agent", "--min-recall", "0", "--min-precision", "0", "-q",
        cwd=tmp_path,
    )  # fmt: skip
    assert cut.returncode == 1, cut.stderr
    assert (
        "35 of 36 runs were never started: the token budget (--max-tokens) was spent; neither"
        " judged nor errors; 8 quer(ies) with no run made fail"
    ) in cut.stdout
    assert "runs failed" not in cut.stdout + cut.stderr
    page = (tmp_path / "triggers-out" / "report.html").read_text()
    assert (  # the words of the command
        "35 of 36 runs were never started: the token budget (--max-tokens) was spent; neither"
        " judged nor errors." in page
    )


def _listed(label: str, query: str, recorded: str = "not recorded") -> str:
    return f"  {label}: at most 30 request(s), {recorded}: {query}"


def test_a_dry_run_prints_every_run_and_asks_nothing(
    skills: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with word_overlap_endpoint() as (model, url):
        planned = agent_skills(
            "triggers", "skills", "--dry-run", "--record", "all", "--upstream-url", url,
            "--model", "fake-agent", "--runs", "2", "--max-tokens", "900", cwd=tmp_path,
        )  # fmt: skip
    assert model.bodies == []
    assert planned.returncode == 0, planned.stderr
    runs = [
        _listed(f"{owner} query {index} run {number}", query)
        for owner, (_text, queries) in SKILLS.items()
        for index, (query, _should) in enumerate(queries, 1)
        for number in (1, 2)
    ]
    assert planned.stdout.splitlines() == [
        "dry run: trigger matrix of 4 skills: 18 conversation(s), no request made",
        *runs,
        "at most 540 model request(s) in all; 0 of 18 conversation(s) recorded, 0 tokens",
        "requests: at most 30 model turns a run (--max-turns); each sent up to 5 times when the"
        " endpoint asks again (--attempts)",
        "budgets: no cap a run (--max-run-tokens), 900 tokens in all (--max-tokens)",
        "record mode all, model fake-agent",
    ]
    assert runs[0] == _listed("csv-tools query 1 run 1", "compute statistics of my csv")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["skills"]  # nothing written

    _record(skills)
    replayable = agent_skills("triggers", "skills", "--dry-run", "--runs", "4", cwd=tmp_path)
    assert replayable.returncode == 0, replayable.stderr
    lines = replayable.stdout.splitlines()
    assert lines[1].startswith("  csv-tools query 1 run 1: at most 30 request(s), recorded ")
    assert "36 of 36 conversation(s) recorded" in lines[-4]
    assert not (tmp_path / "triggers-out").exists()
