"""Every skill_* tool and mode, every error result, and the state after every step."""

from __future__ import annotations

import json
import sys

import jsonschema
import pytest

from pytest_agent_skills.protocol import SkillSession, ToolPool
from pytest_agent_skills.repository import SkillRepository
from tests.support.protocol import (
    WEATHER_TOOLS,
    call_error,
    call_ok,
    content,
    example_repository,
    write_skills,
)

LOADED = "temp:skill:loaded:"
DOCS = "temp:skill:docs:"
TOOLS = "temp:skill:tools:"
RELEASE_DOCS = ["docs/checklist.md", "docs/style-guide.md"]


@pytest.fixture(scope="module")
def repository() -> SkillRepository:
    return example_repository()


@pytest.fixture
def session(repository: SkillRepository) -> SkillSession:
    pool = ToolPool()
    for name in WEATHER_TOOLS:
        pool.stub(name, f"stub {name}", {"type": "object", "properties": {}}, {"tool": name})
    return SkillSession(repository, dynamic_tools=True, tool_pool=pool)


def check_selection_steps(
    session: SkillSession, tool: str, skill: str, items: str, steps: list[tuple]
) -> None:
    """Each step: (arguments, reported mode, selected names, include_all, stored state value)."""
    key = f"temp:skill:{items}:{skill}"
    for arguments, mode, selected, include_all, stored in steps:
        outcome = call_ok(session, tool, {"skill_name": skill, **arguments})
        assert outcome.result == {
            "skill": skill,
            "mode": mode,
            f"selected_{items}": selected,
            f"include_all_{items}": include_all,
        }, arguments
        assert outcome.state_delta == {key: stored}
        assert session.state[key] == stored


# --- definitions ----------------------------------------------------------------------------


def test_base_session_offers_the_five_tools_of_the_reference_toolset(repository):
    names = [tool["function"]["name"] for tool in SkillSession(repository).tool_definitions()]
    assert names == [
        "skill_load",
        "skill_run",
        "skill_list",
        "skill_list_docs",
        "skill_select_docs",
    ]


def test_dynamic_session_adds_list_and_select_tools(session):
    names = [tool["function"]["name"] for tool in session.tool_definitions()]
    assert names[-2:] == ["skill_list_tools", "skill_select_tools"]
    assert len(names) == 7


def test_every_definition_is_an_openai_function_with_a_valid_schema(session):
    for definition in session.tool_definitions():
        assert definition["type"] == "function"
        function = definition["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["description"].strip()
        jsonschema.Draft202012Validator.check_schema(function["parameters"])
        assert function["parameters"]["type"] == "object"
        assert function["parameters"]["additionalProperties"] is False


def test_required_parameters_match_the_reference(session):
    required = {
        tool["function"]["name"]: tool["function"]["parameters"].get("required", [])
        for tool in session.tool_definitions()
    }
    assert required == {
        "skill_load": ["skill_name"],
        "skill_run": ["skill", "command"],
        "skill_list": [],
        "skill_list_docs": ["skill_name"],
        "skill_select_docs": ["skill_name"],
        "skill_list_tools": ["skill_name"],
        "skill_select_tools": ["skill_name"],
    }


# --- skill_list -----------------------------------------------------------------------------


def test_skill_list_returns_sorted_names_wrapped_for_the_model(session, repository):
    outcome = call_ok(session, "skill_list", {})
    assert outcome.result == sorted(repository.names())
    assert "weather-tools" in outcome.result
    assert content(outcome) == {"result": outcome.result}
    assert outcome.state_delta == {}
    assert session.state == {}


def test_arguments_may_be_a_json_string_or_empty(session):
    assert call_ok(session, "skill_list", "").result == call_ok(session, "skill_list", "{}").result
    assert call_ok(session, "skill_list", None).arguments == {}


# --- skill_load -----------------------------------------------------------------------------


def test_load_marks_loaded_clears_docs_and_selects_every_declared_tool(session):
    outcome = call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    assert outcome.result == "skill 'weather-tools' loaded"
    assert content(outcome) == {"result": "skill 'weather-tools' loaded"}
    expected = {
        LOADED + "weather-tools": "1",
        DOCS + "weather-tools": "[]",
        TOOLS + "weather-tools": json.dumps(WEATHER_TOOLS),
    }
    assert outcome.state_delta == expected
    assert session.state == expected
    assert session.loaded_skills() == ["weather-tools"]


def test_load_of_a_skill_without_tools_writes_no_tools_key(session):
    outcome = call_ok(
        session, "skill_load", {"skill_name": "release-notes", "docs": RELEASE_DOCS[:1]}
    )
    assert outcome.state_delta == {
        LOADED + "release-notes": "1",
        DOCS + "release-notes": '["docs/checklist.md"]',
    }


def test_load_with_all_docs_stores_star(session):
    outcome = call_ok(
        session, "skill_load", {"skill_name": "csv-summary", "include_all_docs": True}
    )
    assert outcome.state_delta[DOCS + "csv-summary"] == "*"


def test_reload_without_docs_keeps_the_doc_and_tool_selection(session):
    call_ok(
        session, "skill_load", {"skill_name": "weather-tools", "docs": ["docs/API_REFERENCE.md"]}
    )
    call_ok(
        session, "skill_select_tools", {"skill_name": "weather-tools", "tools": WEATHER_TOOLS[:1]}
    )
    outcome = call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    assert outcome.state_delta == {LOADED + "weather-tools": "1"}
    assert session.state[DOCS + "weather-tools"] == '["docs/API_REFERENCE.md"]'
    assert session.state[TOOLS + "weather-tools"] == '["get_current_weather"]'


def test_reload_with_docs_replaces_them(session):
    call_ok(session, "skill_load", {"skill_name": "release-notes", "docs": RELEASE_DOCS[:1]})
    outcome = call_ok(
        session, "skill_load", {"skill_name": "release-notes", "docs": RELEASE_DOCS[1:]}
    )
    assert outcome.state_delta[DOCS + "release-notes"] == '["docs/style-guide.md"]'


def test_load_strips_the_skill_name_and_echoes_it_as_asked(session):
    # The reference's wording: the name as the model sent it, in Python's repr.
    outcome = call_ok(session, "skill_load", {"skill_name": "  release-notes "})
    assert outcome.result == "skill '  release-notes ' loaded"
    assert LOADED + "release-notes" in session.state
    listed = call_ok(session, "skill_list_tools", {"skill_name": " release-notes "})
    assert listed.result == {"skill_name": " release-notes ", "available_tools": []}


def test_load_unknown_skill_is_an_error_result(session, repository):
    known = ", ".join(repository.names())
    call_error(
        session,
        "skill_load",
        {"skill_name": "weather-tool"},
        "unknown_skill",
        f"unknown skill 'weather-tool'. Did you mean 'weather-tools'? Known skills: {known}."
        " Call skill_list to see the skills.",
    )


def test_unknown_skill_message_is_pinned(tmp_path):
    repository = SkillRepository([write_skills(tmp_path)])
    session = SkillSession(repository)
    call_error(
        session,
        "skill_load",
        {"skill_name": "nope"},
        "unknown_skill",
        "unknown skill 'nope'. Known skills: maps-tools, plain-notes. Call skill_list to see the"
        " skills.",
    )


def test_load_blank_name_is_an_error_result(session):
    call_error(
        session,
        "skill_load",
        {"skill_name": "  "},
        "invalid_arguments",
        "skill_name must not be empty; pass a skill name from the 'Available skills' list.",
    )


def test_load_unknown_doc_is_an_error_and_loads_nothing(session):
    call_error(
        session,
        "skill_load",
        {"skill_name": "release-notes", "docs": ["docs/nope.md", RELEASE_DOCS[0]]},
        "unknown_doc",
        "skill 'release-notes' has no doc 'docs/nope.md'. Its docs are: docs/checklist.md,"
        " docs/style-guide.md.",
    )
    assert session.loaded_skills() == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "invalid arguments for tool 'skill_load': 'skill_name' is a required property."),
        (
            {"skill_name": 3},
            "invalid arguments for tool 'skill_load': skill_name: 3 is not of type 'string'.",
        ),
        (
            {"skill_name": "x", "docs": 5},
            "invalid arguments for tool 'skill_load': docs: 5 is not of type 'array'.",
        ),
        (
            {"skill_name": "x", "doc": ["a"]},
            "invalid arguments for tool 'skill_load': Additional properties are not allowed"
            " ('doc' was unexpected).",
        ),
        (
            '{"skill_name": ',
            "the arguments of tool 'skill_load' are not valid JSON"
            " (Expecting value: line 1 column 16"
            " (char 15)); send a JSON object.",
        ),
        ('["x"]', "the arguments of tool 'skill_load' must be a JSON object, found a list."),
    ],
)
def test_bad_arguments_are_error_results(session, arguments, message):
    call_error(session, "skill_load", arguments, "invalid_arguments", message)


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param("[" * 100_000, id="nested-past-the-recursion-limit"),
        pytest.param(
            '{"skill_name": ' + "1" * 5000 + "}",
            id="integer-over-the-digit-limit",
            marks=pytest.mark.skipif(
                not hasattr(sys, "get_int_max_str_digits"),
                reason="this Python has no integer digit limit, so json reads the number",
            ),
        ),
    ],
)
def test_arguments_json_cannot_read_are_error_results_not_exceptions(session, arguments):
    call_error(
        session,
        "skill_load",
        arguments,
        "invalid_arguments",
        "the arguments of tool 'skill_load' are nested too deeply or hold a number too long to"
        " read; send a JSON object of plain values.",
    )


# --- docs -----------------------------------------------------------------------------------


def test_list_docs_lists_docs_and_scripts(session):
    assert (
        call_ok(session, "skill_list_docs", {"skill_name": "release-notes"}).result == RELEASE_DOCS
    )
    assert call_ok(session, "skill_list_docs", {"skill_name": "weather-tools"}).result == [
        "docs/API_REFERENCE.md",
        "scripts/report.py",
    ]


def test_list_docs_does_not_need_a_loaded_skill_and_writes_nothing(session):
    assert call_ok(session, "skill_list_docs", {"skill_name": "csv-summary"}).state_delta == {}
    assert session.state == {}


def test_list_docs_unknown_skill(session):
    assert session.call("skill_list_docs", {"skill_name": "nope"}).error_code == "unknown_skill"


def test_select_docs_every_mode_step_by_step(session):
    call_ok(session, "skill_load", {"skill_name": "release-notes"})
    steps = [
        (
            {"docs": [RELEASE_DOCS[1]]},
            "replace",
            [RELEASE_DOCS[1]],
            False,
            '["docs/style-guide.md"]',
        ),
        (
            {"docs": [RELEASE_DOCS[0]], "mode": "add"},
            "add",
            [RELEASE_DOCS[1], RELEASE_DOCS[0]],
            False,
            '["docs/style-guide.md", "docs/checklist.md"]',
        ),
        (
            {"docs": [RELEASE_DOCS[0]], "mode": "add"},
            "add",
            [RELEASE_DOCS[1], RELEASE_DOCS[0]],
            False,
            '["docs/style-guide.md", "docs/checklist.md"]',
        ),
        (
            {"docs": [RELEASE_DOCS[0]], "mode": "replace"},
            "replace",
            [RELEASE_DOCS[0]],
            False,
            '["docs/checklist.md"]',
        ),
        ({"mode": "clear", "docs": [RELEASE_DOCS[0]]}, "clear", [], False, "[]"),
        ({"include_all_docs": True}, "replace", [], True, "*"),
        ({"docs": [RELEASE_DOCS[0]], "mode": "add"}, "add", [], True, "*"),
        ({"docs": [RELEASE_DOCS[0]]}, "replace", [RELEASE_DOCS[0]], False, '["docs/checklist.md"]'),
        ({"include_all_docs": True, "mode": "add"}, "add", [], True, "*"),
        ({"mode": "clear"}, "clear", [], False, "[]"),
    ]
    check_selection_steps(session, "skill_select_docs", "release-notes", "docs", steps)


def test_select_docs_requires_a_loaded_skill(session):
    call_error(
        session,
        "skill_select_docs",
        {"skill_name": "release-notes", "docs": RELEASE_DOCS},
        "skill_not_loaded",
        "skill 'release-notes' is not loaded. Call skill_load with"
        " skill_name='release-notes' first.",
    )


def test_select_docs_unknown_doc(session):
    call_ok(session, "skill_load", {"skill_name": "release-notes"})
    call_error(
        session,
        "skill_select_docs",
        {"skill_name": "release-notes", "docs": ["a.md", "b.md"]},
        "unknown_doc",
        "skill 'release-notes' has no doc 'a.md', 'b.md'. Its docs are: docs/checklist.md,"
        " docs/style-guide.md.",
    )


def test_select_docs_bad_mode(session):
    call_ok(session, "skill_load", {"skill_name": "release-notes"})
    call_error(
        session,
        "skill_select_docs",
        {"skill_name": "release-notes", "mode": "merge"},
        "invalid_arguments",
        "invalid arguments for tool 'skill_select_docs': mode: 'merge' is not one of"
        " ['add', 'replace', 'clear'].",
    )


def test_select_docs_unknown_skill(session):
    assert session.call("skill_select_docs", {"skill_name": "nope"}).error_code == "unknown_skill"


# --- tools ----------------------------------------------------------------------------------


def test_list_tools_returns_the_tools_section(session):
    outcome = call_ok(session, "skill_list_tools", {"skill_name": "weather-tools"})
    assert outcome.result == {"skill_name": "weather-tools", "available_tools": WEATHER_TOOLS}
    assert content(outcome) == outcome.result
    assert call_ok(session, "skill_list_tools", {"skill_name": "release-notes"}).result == {
        "skill_name": "release-notes",
        "available_tools": [],
    }
    assert session.state == {}


def test_list_tools_unknown_skill(session):
    assert session.call("skill_list_tools", {"skill_name": "nope"}).error_code == "unknown_skill"


def test_select_tools_every_mode_step_by_step(session):
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    current, forecast, search = WEATHER_TOOLS
    steps = [
        ({"tools": [current]}, "replace", [current], False, json.dumps([current])),
        (
            {"tools": [search, current], "mode": "add"},
            "add",
            [current, search],
            False,
            json.dumps([current, search]),
        ),
        ({"mode": "clear"}, "clear", [], False, "[]"),
        ({"tools": [forecast], "mode": "add"}, "add", [forecast], False, json.dumps([forecast])),
        ({"include_all_tools": True}, "replace", [], True, "*"),
        ({"tools": [current], "mode": "add"}, "add", [], True, "*"),
        (
            {"tools": [current], "mode": "replace"},
            "replace",
            [current],
            False,
            json.dumps([current]),
        ),
    ]
    check_selection_steps(session, "skill_select_tools", "weather-tools", "tools", steps)


def test_select_tools_rejects_undeclared_tools(session):
    call_ok(session, "skill_load", {"skill_name": "weather-tools"})
    call_error(
        session,
        "skill_select_tools",
        {"skill_name": "weather-tools", "tools": ["old_weather_api"]},
        "undeclared_tool",
        "skill 'weather-tools' has no tool 'old_weather_api'. Its tools are: get_current_weather,"
        " get_weather_forecast, search_city_by_name.",
    )


def test_select_tools_requires_a_loaded_skill(session):
    call_error(
        session,
        "skill_select_tools",
        {"skill_name": "weather-tools", "tools": WEATHER_TOOLS},
        "skill_not_loaded",
        "skill 'weather-tools' is not loaded. Call skill_load with"
        " skill_name='weather-tools' first.",
    )


def test_select_tools_is_not_offered_without_dynamic_tools(repository):
    session = SkillSession(repository)
    call_error(
        session,
        "skill_select_tools",
        {"skill_name": "weather-tools"},
        "unknown_tool",
        "unknown tool 'skill_select_tools'. Available tools: skill_load, skill_run, skill_list,"
        " skill_list_docs, skill_select_docs",
    )


# --- calls in general -----------------------------------------------------------------------


def test_unknown_tool_is_an_error_result(session):
    outcome = call_error(
        session,
        "skill_exec",
        {},
        "unknown_tool",
        "unknown tool 'skill_exec'. Available tools: skill_load, skill_run, skill_list,"
        " skill_list_docs, skill_select_docs, skill_list_tools, skill_select_tools",
    )
    assert outcome.arguments == {}


def test_error_results_reach_the_model_as_objects(session):
    outcome = session.call("skill_load", {"skill_name": "nope"})
    assert content(outcome) == outcome.result
    assert outcome.to_message("call_1") == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": outcome.content(),
    }


def test_history_records_every_call_in_order(session):
    session.call("skill_list", {})
    session.call("nope", {})
    session.call("skill_load", {"skill_name": "release-notes"})
    assert [(o.name, o.is_error) for o in session.history] == [
        ("skill_list", False),
        ("nope", True),
        ("skill_load", False),
    ]


def test_state_is_a_copy(session):
    call_ok(session, "skill_load", {"skill_name": "release-notes"})
    session.state.clear()
    assert session.loaded_skills() == ["release-notes"]


def test_unparsable_arguments_of_an_unknown_tool_report_the_unknown_tool(session):
    outcome = session.call("nope", "{broken")
    assert (outcome.error_code, outcome.arguments) == ("unknown_tool", None)
