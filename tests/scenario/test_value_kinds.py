"""``docpath.kind_of``: the one wording of "found ..." in every message about a document's value
(front matter, scenarios, evals.json, written documents, tool arguments, cassettes)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from pytest_agent_skills.docpath import kind_of, type_mismatch


@pytest.mark.parametrize(
    ("value", "json_words", "yaml_words"),
    [
        (None, "null", "an empty value"),
        (True, "a boolean (true)", "a boolean (true)"),
        ({"a": 1}, "an object", "a mapping"),
        ([1], "a list", "a list"),
        ("abc", 'a string "abc"', 'a string "abc"'),
        (3, "a number 3", "a number 3"),
        (1.5, "a number 1.5", "a number 1.5"),
        ("x" * 80, 'a string "' + "x" * 56 + "...", 'a string "' + "x" * 56 + "..."),
        (datetime.date(2024, 1, 2), "a date (2024-01-02)", "a date (2024-01-02)"),
    ],
)
def test_a_value_is_described_in_the_words_of_its_document(
    value: Any, json_words: str, yaml_words: str
) -> None:
    assert kind_of(value) == json_words
    assert kind_of(value, yaml=True) == yaml_words


def test_a_type_error_says_what_was_expected_in_the_same_words() -> None:
    assert type_mismatch(["object", "string"], [1]) == (
        "expected an object or a string, found a list"
    )
    assert type_mismatch("object", None, yaml=True) == "expected a mapping, found an empty value"
    assert type_mismatch(["integer", "null"], "1") == (
        'expected an integer or null, found a string "1"'
    )
