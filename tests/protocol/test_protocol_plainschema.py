"""``plainly_valid``: True only where ``jsonschema`` finds the arguments valid too (the
session then skips jsonschema); the skill tools' ordinary calls take that quick path."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agent_skills.protocol.exec_tools import EXEC_TOOLS
from pytest_agent_skills.protocol.plainschema import plainly_valid
from pytest_agent_skills.protocol.tools import BASE_TOOLS, DYNAMIC_TOOLS

TOOLS = {tool.name: tool.parameters for tool in (*BASE_TOOLS, *DYNAMIC_TOOLS, *EXEC_TOOLS)}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, -1.5, 2.5, float("nan")]),
    st.sampled_from(["", "a", "add", "replace", "x" * 3]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=8,
)
type_names = st.sampled_from(
    ["string", "integer", "number", "boolean", "object", "array", "null", "strin"]
)
rules = {
    "type": st.one_of(type_names, st.lists(type_names, max_size=2)),
    "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
    "enum": st.lists(st.one_of(scalars), max_size=3),
    "minLength": st.one_of(st.integers(-1, 3), st.just(1.5)),
    "minimum": st.one_of(st.integers(-2, 2), st.just(0.5), st.just(True)),
    "description": st.just("text"),
    "default": values,
    "format": st.just("email"),
    "maxLength": st.just(2),
}


def schemas(depth: int = 2) -> st.SearchStrategy[Any]:
    nested = schemas(depth - 1) if depth else st.just({"type": "string"})
    keyword_rules = {
        **rules,
        "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), nested, max_size=3),
        "items": nested,
        "additionalProperties": st.one_of(st.booleans(), nested),
    }
    return st.one_of(
        st.booleans(),
        st.fixed_dictionaries({}, optional=keyword_rules),
    )


@settings(max_examples=2000, deadline=None)
@given(schema=schemas(), value=values)
def test_never_valid_where_jsonschema_is_not(schema: Any, value: Any) -> None:
    verdict = plainly_valid(schema, value)

    assert verdict in (True, False)
    if verdict:
        assert jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("skill_list", {}),
        ("skill_load", {"skill_name": "weather-tools"}),
        ("skill_load", {"skill_name": "notes", "docs": ["docs/style.md"]}),
        ("skill_list_docs", {"skill_name": "weather-tools"}),
        ("skill_select_docs", {"skill_name": "w", "docs": ["docs/API.md"], "mode": "add"}),
        ("skill_select_tools", {"skill_name": "w", "tools": ["get_current_weather"]}),
        (
            "skill_run",
            {
                "skill": "w",
                "command": "python3 scripts/report.py > out/r.txt",
                "output_files": ["out/*.txt"],
                "env": {"CITY": "Paris"},
                "timeout": 5,
                "save_as_artifacts": False,
            },
        ),
        ("skill_exec", {"skill": "w", "command": "cat", "yield_time_ms": 0}),
    ],
)
def test_ordinary_calls_of_the_skill_tools_take_the_quick_path(
    tool: str, arguments: dict[str, Any]
) -> None:
    assert plainly_valid(TOOLS[tool], arguments)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("skill_load", {}),  # required
        ("skill_load", {"skill_name": "w", "extra": 1}),  # additional property
        ("skill_load", {"skill_name": 3}),
        ("skill_load", {"skill_name": "w", "docs": ["a", 1]}),
        ("skill_select_docs", {"skill_name": "w", "mode": "merge"}),  # not in the enum
        ("skill_run", {"skill": "w", "command": ""}),  # minLength
        ("skill_run", {"skill": "w", "command": "x", "timeout": -1}),  # minimum
        ("skill_run", {"skill": "w", "command": "x", "timeout": 5.0}),  # jsonschema decides
        ("skill_run", {"skill": "w", "command": "x", "timeout": True}),
        ("skill_run", {"skill": "w", "command": "x", "env": {"A": 1}}),
    ],
)
def test_anything_else_is_left_to_jsonschema(tool: str, arguments: dict[str, Any]) -> None:
    assert not plainly_valid(TOOLS[tool], arguments)


def test_unknown_keywords_are_left_to_jsonschema() -> None:
    schema = {"type": "object", "patternProperties": {"^a": {"type": "string"}}}

    assert not plainly_valid(schema, {"a": "x"})
    assert not plainly_valid({"type": "string", "format": "email"}, "a@b.c")
