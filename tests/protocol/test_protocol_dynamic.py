"""The tool pool and dynamic tool exposure (only_active_skills, missing tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from pytest_agent_skills.protocol import (
    MissingToolError,
    PoolTool,
    SkillSession,
    ToolPool,
    ToolPoolError,
    schema_from_signature,
)
from pytest_agent_skills.repository import SkillRepository
from tests.support.protocol import WEATHER_TOOLS, call_ok, content, example_repository, write_skills

USER = {"role": "user", "content": "hello"}
EMPTY = {"type": "object", "properties": {}}


def get_current_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Current weather for a city.

    Longer explanation that is not part of the description.
    """
    return {"city": city, "unit": unit, "temperature": 21}


def full_pool(extra: int = 0) -> ToolPool:
    pool = ToolPool([get_current_weather])
    pool.stub("get_weather_forecast", "Forecast.", EMPTY, {"days": 3})
    pool.stub("search_city_by_name", "Search.", EMPTY, {"name": "Paris"})
    for index in range(extra):
        pool.stub(f"unrelated_{index}", "Unrelated.", EMPTY, index)
    return pool


@pytest.fixture
def two_roots(tmp_path: Path) -> SkillRepository:
    return SkillRepository([Path(__file__).parents[2] / "skills", write_skills(tmp_path)])


# --- the pool -------------------------------------------------------------------------------


def test_schema_from_signature():
    def tool(
        name: str,
        count: int,
        ratio: float = 1.0,
        flag: bool = False,
        tags: list[str] | None = None,
        options: dict | None = None,
        mode: Literal["a", "b"] = "a",
        anything=None,
        *args: str,
        **kwargs: str,
    ) -> None:
        """Do it."""

    assert schema_from_signature(tool) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object"},
            "mode": {"enum": ["a", "b"]},
            "anything": {},
        },
        "required": ["name", "count"],
    }


def test_register_a_function_uses_its_name_docstring_and_signature():
    tool = ToolPool().register(get_current_weather)
    assert tool.definition() == {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }


def test_register_a_tool_object_and_explicit_overrides():
    class Tool:
        def __init__(self) -> None:
            self.name = "lookup"
            self.description = "Look it up."
            self.parameters = {"type": "object", "properties": {"q": {"type": "string"}}}

        def function(self, q: str) -> str:
            return q.upper()

    pool = ToolPool()
    entry = pool.register(Tool())
    assert (entry.name, entry.description, entry(q="x")) == ("lookup", "Look it up.", "X")
    renamed = pool.register(lambda: 1, name="one", description="One.", parameters=EMPTY)
    assert renamed.definition()["function"]["name"] == "one"
    assert pool.names() == ["lookup", "one"]
    assert "one" in pool and len(pool) == 2


def test_register_a_callable_tool_object_whose_function_attribute_is_not_callable():
    class Tool:
        def __init__(self) -> None:
            self.name = "shout"
            self.description = "Shout."
            self.parameters = {"type": "object", "properties": {"q": {"type": "string"}}}
            self.function = "uppercase"  # a label, not the callable: the object itself is called

        def __call__(self, q: str) -> str:
            return q.upper() + "!"

    entry = ToolPool().register(Tool())
    assert entry(q="hi") == "HI!"


@pytest.mark.parametrize(
    ("register", "message"),
    [
        (
            lambda pool: pool.register(lambda: 1),
            "cannot name the tool <function",
        ),
        (
            lambda pool: pool.register(42),
            "cannot register 42 as a tool: give a callable, a PoolTool, or an object with 'name',"
            " 'description', 'parameters' and a callable 'function'",
        ),
        (
            lambda pool: [pool.stub("x", "X", EMPTY, 1), pool.stub("x", "X", EMPTY, 2)],
            "a tool named 'x' is already in the pool; tool names must be unique",
        ),
        (
            lambda pool: pool.stub("x", "X", {"type": "string"}, 1),
            'the parameters schema of tool \'x\' must be a JSON Schema with "type": "object",'
            ' found {"type": "string"}',
        ),
        (
            lambda pool: pool.stub("x", "X", EMPTY, object()),
            "the return value of tool 'x' is not JSON-serialisable: Object of type object is not"
            " JSON serializable",
        ),
    ],
)
def test_pool_registration_errors(register, message):
    with pytest.raises(ToolPoolError) as error:
        register(ToolPool())
    assert str(error.value).startswith(message)


def test_unsupported_annotation_asks_for_an_explicit_schema():
    def tool(path: Path) -> None:
        pass

    with pytest.raises(ToolPoolError) as error:
        schema_from_signature(tool)
    assert str(error.value) == (
        "cannot derive a JSON Schema for parameter 'path' of"
        " test_unsupported_annotation_asks_for_an_explicit_schema.<locals>.tool (annotation"
        " <class 'pathlib.Path'>); pass parameters={...} explicitly"
    )


# --- exposure -------------------------------------------------------------------------------


def pool_names(session: SkillSession) -> list[str]:
    return [
        tool["function"]["name"]
        for tool in session.tool_definitions()
        if not tool["function"]["name"].startswith("skill_")
    ]


def test_without_dynamic_exposure_every_pool_tool_is_offered():
    session = SkillSession(example_repository(), tool_pool=full_pool(extra=2))
    assert pool_names(session) == [*WEATHER_TOOLS, "unrelated_0", "unrelated_1"]


def test_dynamic_exposure_follows_load_and_selection():
    session = SkillSession(example_repository(), tool_pool=full_pool(extra=5), dynamic_tools=True)
    assert pool_names(session) == []
    call_ok(session, "skill_load", {"skill_name": "release-notes"})
    assert pool_names(session) == []
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    assert pool_names(session) == WEATHER_TOOLS
    call_ok(
        session, "skill_select_tools", {"skill_name": "weather-tools", "tools": WEATHER_TOOLS[1:2]}
    )
    assert pool_names(session) == WEATHER_TOOLS[1:2]
    call_ok(
        session,
        "skill_select_tools",
        {"skill_name": "weather-tools", "tools": WEATHER_TOOLS[:1], "mode": "add"},
    )
    assert pool_names(session) == [WEATHER_TOOLS[1], WEATHER_TOOLS[0]]
    call_ok(session, "skill_select_tools", {"skill_name": "weather-tools", "mode": "clear"})
    assert pool_names(session) == []
    call_ok(
        session, "skill_select_tools", {"skill_name": "weather-tools", "include_all_tools": True}
    )
    assert pool_names(session) == WEATHER_TOOLS


def test_exposed_pool_tools_can_be_called_and_are_validated():
    session = SkillSession(example_repository(), tool_pool=full_pool(), dynamic_tools=True)
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    outcome = call_ok(session, "get_current_weather", '{"city": "Paris"}')
    assert outcome.result == {"city": "Paris", "unit": "celsius", "temperature": 21}
    assert content(outcome) == outcome.result
    assert outcome.state_delta == {}
    stub = call_ok(session, "get_weather_forecast", {})
    assert content(stub) == {"days": 3}
    invalid = session.call("get_current_weather", {"unit": "kelvin"})
    assert invalid.result == {
        "error": "invalid_arguments",
        "message": "invalid arguments for tool 'get_current_weather': 'city' is a required"
        " property; unit: 'kelvin' is not one of ['celsius', 'fahrenheit'].",
        "status": "failed",
    }


def test_a_pool_tool_gets_a_value_of_the_wrong_json_type_as_the_reference_hands_it_over():
    """1.2.0's function tools check only that mandatory arguments are there; the value goes to
    the tool as sent, and the outcome says what the schema did not allow."""
    session = SkillSession(example_repository(), tool_pool=full_pool(), dynamic_tools=True)
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    outcome = call_ok(session, "get_current_weather", {"city": 42})
    assert outcome.result == {"city": 42, "unit": "celsius", "temperature": 21}
    assert outcome.unchecked == ("city: 42 is not of type 'string'",)
    missing = session.call("get_current_weather", {"unit": "celsius"})
    assert missing.error_code == "invalid_arguments"
    assert missing.result["message"] == (
        "invalid arguments for tool 'get_current_weather': 'city' is a required property."
    )
    strict = SkillSession(
        example_repository(), tool_pool=full_pool(), dynamic_tools=True, lax_arguments=False
    )
    call_ok(strict, "skill_load", {"skill_name": "weather-tools"})
    assert strict.call("get_current_weather", {"city": 42}).error_code == "invalid_arguments"


@pytest.mark.parametrize("dynamic_tools", [False, True], ids=["every-pool-tool", "dynamic"])
def test_a_pool_tool_named_like_a_skill_tool_is_called_where_it_is_offered(dynamic_tools):
    pool = ToolPool()
    pool.stub("skill_list", "Shadows the skill tool", {"type": "object", "properties": {}}, "pool")
    session = SkillSession(example_repository(), tool_pool=pool, dynamic_tools=dynamic_tools)

    outcome = call_ok(session, "skill_list", {})

    # Offered (every pool tool is, without dynamic exposure): it comes after the skill tools
    # and takes the name; not offered: the skill tool answers.
    assert (outcome.result == "pool") is not dynamic_tools


def test_a_pool_tool_not_exposed_cannot_be_called():
    session = SkillSession(example_repository(), tool_pool=full_pool(), dynamic_tools=True)
    outcome = session.call("get_current_weather", {"city": "Paris"})
    assert outcome.result == {
        "error": "unknown_tool",
        "message": "tool 'get_current_weather' is not available now: load (skill_load) a skill"
        " that declares it and select it. Available tools: skill_load, skill_run, skill_list,"
        " skill_list_docs, skill_select_docs, skill_list_tools, skill_select_tools",
        "status": "failed",
    }


def test_a_raising_pool_tool_gives_an_execution_error():
    def get_current_weather(city: str) -> dict:
        raise RuntimeError(f"no data for {city}")

    pool = ToolPool([get_current_weather])
    session = SkillSession(example_repository(), tool_pool=pool)
    outcome = session.call("get_current_weather", {"city": "Oslo"})
    assert outcome.result == {
        "error": "tool_execution_error",
        "message": "tool 'get_current_weather' raised RuntimeError: no data for Oslo",
        "status": "failed",
    }


def test_only_active_skills_limits_exposure_to_skills_touched_this_turn(two_roots):
    pool = full_pool()
    pool.stub("find_route", "Route.", EMPTY, {})
    pool.stub("find_place", "Place.", EMPTY, {})
    # Session mode: the skills stay loaded from one user turn to the next.
    session = SkillSession(two_roots, tool_pool=pool, dynamic_tools=True, load_mode="session")
    session.build_request([USER])
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    call_ok(session, "skill_load", {"skill_name": "maps-tools"})
    assert pool_names(session) == ["find_route", "find_place", *WEATHER_TOOLS]
    # A new user turn: nothing touched yet, so every loaded skill counts.
    request = session.build_request([USER, {"role": "assistant", "content": "ok"}, USER])
    assert request.tool_names[7:] == ["find_route", "find_place", *WEATHER_TOOLS]
    # Touching one skill this turn hides the tools of the others (1.2.0 behaviour).
    call_ok(
        session, "skill_select_tools", {"skill_name": "weather-tools", "tools": WEATHER_TOOLS[:1]}
    )
    assert pool_names(session) == WEATHER_TOOLS[:1]
    # A tool message at the end is the same turn.
    request = session.build_request([USER, {"role": "tool", "tool_call_id": "1", "content": "{}"}])
    assert request.tool_names[7:] == WEATHER_TOOLS[:1]
    session.begin_turn()
    assert pool_names(session) == ["find_route", "find_place", WEATHER_TOOLS[0]]


def test_without_only_active_skills_every_loaded_skill_counts(two_roots):
    pool = full_pool()
    pool.stub("find_route", "Route.", EMPTY, {})
    pool.stub("find_place", "Place.", EMPTY, {})
    session = SkillSession(two_roots, tool_pool=pool, dynamic_tools=True, only_active_skills=False)
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    call_ok(session, "skill_load", {"skill_name": "maps-tools"})
    call_ok(
        session, "skill_select_tools", {"skill_name": "weather-tools", "tools": WEATHER_TOOLS[:1]}
    )
    assert pool_names(session) == ["find_route", "find_place", WEATHER_TOOLS[0]]


def test_a_selected_tool_missing_from_the_pool_fails_the_request():
    pool = ToolPool([get_current_weather])
    session = SkillSession(example_repository(), tool_pool=pool, dynamic_tools=True)
    outcome = call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    assert outcome.state_delta["temp:skill:loaded:weather-tools"] == "1"
    with pytest.raises(MissingToolError) as error:
        session.build_request([USER])
    assert str(error.value) == (
        "2 tool(s) selected by loaded skills are not in the tool pool:\n"
        "- skill 'weather-tools' declares tool 'get_weather_forecast' in its Tools: section, but"
        " the tool pool has no tool of that name; register it (ToolPool.register or ToolPool.stub)"
        " or remove it from the skill's Tools: section\n"
        "- skill 'weather-tools' declares tool 'search_city_by_name' in its Tools: section, but"
        " the tool pool has no tool of that name; register it (ToolPool.register or ToolPool.stub)"
        " or remove it from the skill's Tools: section\n"
        "(pass allow_missing_tools=True to SkillSession to report them in"
        " AssembledRequest.missing_tools instead)"
    )
    with pytest.raises(MissingToolError):
        session.tool_definitions()
    # The exposed tool itself still answers: the call path never raises.
    assert call_ok(session, "get_current_weather", {"city": "Rome"}).result["city"] == "Rome"


def test_missing_tools_can_be_reported_instead():
    pool = ToolPool([get_current_weather])
    session = SkillSession(
        example_repository(), tool_pool=pool, dynamic_tools=True, allow_missing_tools=True
    )
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    request = session.build_request([USER])
    assert [(m.skill, m.tool) for m in request.missing_tools] == [
        ("weather-tools", "get_weather_forecast"),
        ("weather-tools", "search_city_by_name"),
    ]
    assert request.tool_names[-1] == "get_current_weather"


def test_pool_tool_entries_are_pool_tools():
    pool = full_pool()
    assert all(isinstance(tool, PoolTool) for tool in pool)
    assert [d["function"]["name"] for d in pool.definitions()] == WEATHER_TOOLS
    assert pool.get("nope") is None


def test_a_pool_tool_returning_something_not_json_is_a_configuration_error():
    def get_current_weather(city: str) -> object:
        return object()

    session = SkillSession(example_repository(), tool_pool=ToolPool([get_current_weather]))
    with pytest.raises(ToolPoolError) as error:
        session.call("get_current_weather", {"city": "Oslo"})
    assert str(error.value) == (
        "the return value of tool 'get_current_weather' is not JSON-serialisable: Object of type"
        " object is not JSON serializable"
    )
