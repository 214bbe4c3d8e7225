"""Reading evals/evals.json and evals/triggers.json: what is taken, and every refusal with
its file, line and fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agent_skills.evals.setup.eval_files import (
    EvalFileError,
    json_lines,
    load_evals,
    load_triggers,
)
from tests.support.skill_files import write_skill


def _skill(tmp_path: Path, evals_text: str, files: dict[str, str] | None = None) -> Path:
    return write_skill(
        tmp_path, "csv-stats", files={"evals/evals.json": evals_text, **(files or {})}
    )


GOOD = """{
  "skill_name": "csv-stats",
  "evals": [
    {"id": 1, "name": "mean", "prompt": "Mean of value?",
     "files": ["evals/files/data.csv"],
     "expectations": ["The answer gives the mean",
                      {"files": [{"path": "out/stats.json", "exists": true}]}]},
    {"id": 2, "prompt": "Max?", "assertions": ["The answer gives 9"]}
  ]
}
"""


def test_a_good_file_gives_its_evals_with_both_spellings_of_expectations(tmp_path: Path) -> None:
    skill = _skill(tmp_path, GOOD, {"evals/files/data.csv": "value\n1\n"})
    loaded = load_evals(skill, "csv-stats")
    assert [case.id for case in loaded.evals] == [1, 2]
    first, second = loaded.evals
    assert first.files == ("evals/files/data.csv",)
    assert first.graded == ["The answer gives the mean"]
    assert first.expectations[1] == {"files": [{"path": "out/stats.json", "exists": True}]}
    assert first.line == 4 and second.line == 8
    assert second.graded == ["The answer gives 9"] and second.title == "eval 2"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            '{"skill_name": "other", "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}',
            1,
            "skill_name 'other' is not the name of the skill",
        ),
        (
            '{"skill_name": "csv-stats",\n "evals": [\n  {"id": 1, "prompt": "p",'
            ' "expectations": ["x"]},\n  {"id": 1, "prompt": "q", "expectations": ["y"]}]}',
            4,
            "evals[1].id 1 is already the id of the eval at line 3",
        ),
        (
            '{"skill_name": "csv-stats",\n "evals": [{"id": "1", "prompt": "p"}]}',
            2,
            'evals[0].id: expected an integer, found a string "1"',
        ),
        (
            '{"skill_name": "csv-stats",\n "evals": [{"id": 1,\n "prompt": "p",\n'
            ' "expectatoins": ["x"]}]}',
            4,
            "unknown key 'expectatoins' in evals[0]. Did you mean 'expectations'?",
        ),
        (
            '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p"}]}',
            1,
            "evals[0] has no 'expectations'",
        ),
        (
            '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p",\n'
            ' "expectations": ["x"], "assertions": ["y"]}]}',
            2,
            "has both 'expectations' and",
        ),
        (
            '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p",\n'
            ' "files": ["evals/files/missing.csv"], "expectations": ["x"]}]}',
            2,
            "input file 'evals/files/missing.csv' is not a file in",
        ),
        (
            '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p",\n'
            ' "files": ["../secret"], "expectations": ["x"]}]}',
            2,
            "must be a path inside the skill folder",
        ),
        (
            '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p", "expectations": [\n'
            ' {"final": {"matches": "("}}]}]}',
            2,
            "is not a valid regular expression",
        ),
        (
            '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p", "expectations": [\n'
            ' {"calls": [{"tool": "skill_load"}]}]}]}',
            2,
            "unknown key 'tool'",
        ),
        ('{"skill_name": "csv-stats", "evals": []}', 1, "evals: must not be empty"),
        ('{"skill_name": "csv-stats",\n "evals": [\n', 3, "not valid JSON"),
    ],
)
def test_a_bad_file_is_an_error_at_its_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    skill = _skill(tmp_path, text)
    with pytest.raises(EvalFileError) as caught:
        load_evals(skill, "csv-stats")
    assert caught.value.line == line, str(caught.value)
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{skill / 'evals' / 'evals.json'}:{line}: ")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "csv-stats")
    with pytest.raises(EvalFileError, match=r"evals\.json: no such file"):
        load_evals(skill, "csv-stats")


def test_triggers_are_read_with_their_lines_and_refused_when_malformed(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "csv-stats",
        files={
            "evals/triggers.json": '[\n {"query": "mean of a csv", "should_trigger": true},\n'
            ' {"query": "a poem", "should_trigger": false}\n]'
        },
    )
    queries = load_triggers(skill)
    assert [(q.query, q.should_trigger, q.line) for q in queries] == [
        ("mean of a csv", True, 2),
        ("a poem", False, 3),
    ]
    (skill / "evals" / "triggers.json").write_text('[\n {"query": "x", "should_trigger": "yes"}]')
    with pytest.raises(EvalFileError, match=r"triggers.json:2: \[0\].should_trigger: expected a"):
        load_triggers(skill)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(_json, st.sampled_from([None, 1, 2]))
def test_json_lines_finds_every_value_where_it_starts(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    lines = json_lines(text)

    def paths(node: object, prefix: tuple[object, ...]) -> list[tuple[object, ...]]:
        found = [prefix]
        if isinstance(node, dict):
            for key, item in node.items():
                found += paths(item, (*prefix, key))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                found += paths(item, (*prefix, index))
        return found

    assert set(lines) == set(paths(value, ()))
    if indent is None:
        assert set(lines.values()) == {1}
    for doc_path, line in lines.items():
        assert 1 <= line <= text.count("\n") + 1, doc_path


def test_two_input_files_of_one_name_are_refused(tmp_path: Path) -> None:
    text = (
        '{"skill_name": "csv-stats", "evals": [{"id": 1, "prompt": "p",\n'
        ' "files": ["evals/a/data.csv", "evals/b/data.csv"], "expectations": ["x"]}]}'
    )
    skill = _skill(tmp_path, text, {"evals/a/data.csv": "1", "evals/b/data.csv": "2"})
    with pytest.raises(EvalFileError, match=r"two input files are named 'data\.csv'") as caught:
        load_evals(skill, "csv-stats")
    assert caught.value.line == 2
