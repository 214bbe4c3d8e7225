"""The readable JSON text of cassettes and eval files is ``json.dumps(value, indent=2,
ensure_ascii=False)``'s, for every value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agent_skills.harness.jsontext import indented

# Every kind of value json.dumps writes: NaN and infinities, lone surrogates, keys of every
# kind it accepts, tuples, subclasses of the plain types.
KEYS = st.text(st.characters(exclude_categories=())) | st.integers() | st.floats() | st.booleans()
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | st.text(st.characters(exclude_categories=())),
    lambda children: (
        st.lists(children)
        | st.lists(children).map(tuple)
        | st.dictionaries(st.text(st.characters(exclude_categories=())), children)
        | st.dictionaries(KEYS, children)
    ),
    max_leaves=40,
)


class Text(str):
    pass


class Number(int):
    pass


@settings(max_examples=500, deadline=None, database=None)
@given(VALUES)
def test_the_text_is_json_dumps_text(value: Any) -> None:
    assert indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": {}, "b": [], "c": [{}], "d": [[]]},
        {"interactions": [{"request": {"body": {"messages": [{"content": "é \u2028 \"q\""}]}}}]},
        [float("nan"), float("inf"), -float("inf"), -0.0, 1e300, 10**30],
        {Text("subclass"): Number(3)},
        [Text("subclass"), Number(3)],
        {"deep": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]},
    ],
)
def test_the_text_of_particular_values_is_json_dumps_text(value: Any) -> None:
    assert indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_what_json_dumps_refuses_is_refused_alike() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        json.dumps(deep, indent=2, ensure_ascii=False)
    with pytest.raises(RecursionError):
        indented(deep)
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        indented(circular)
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented({"a": object()})
