"""Lax argument types: values pydantic's lax mode converts (as the reference's skill_run
validation does) reach the tools converted, each conversion reported; what it refuses stays an
error result; ``docs`` / ``tools`` lists also take ``null`` and a lone string."""

from __future__ import annotations

import json

import pytest

from pytest_agent_skills.harness import run_conversation
from pytest_agent_skills.protocol import (
    LEFT_OUT,
    Coercion,
    SkillSession,
    coerce_arguments,
)
from pytest_agent_skills.protocol.tools import SKILL_LOAD, SKILL_RUN
from tests.support.harness import record_options, scripted_upstream
from tests.support.protocol import call_error, call_ok, example_repository

REPOSITORY = example_repository()
NOTES = "release-notes"


@pytest.fixture
def session() -> SkillSession:
    with SkillSession(REPOSITORY, dynamic_tools=True) as session:
        yield session


@pytest.mark.parametrize(
    ("value", "converted"),
    [("5", 5), (" 7 ", 7), ("5.0", 5), (True, 1), ("1_000", 1000)],
    ids=["text", "padded", "integral-text", "boolean", "underscores"],
)
def test_an_integer_given_as_pydantic_accepts_it_is_converted(value, converted) -> None:
    arguments, coercions = coerce_arguments(
        SKILL_RUN.parameters, {"skill": NOTES, "command": "true", "timeout": value}
    )
    assert arguments["timeout"] == converted and type(arguments["timeout"]) is int
    assert coercions == (Coercion(("timeout",), value, converted),)


@pytest.mark.parametrize(
    ("value", "converted"),
    [("yes", True), ("no", False), ("false", False), ("ON", True), (1, True), (0, False)],
)
def test_a_boolean_given_as_pydantic_accepts_it_is_converted(value, converted) -> None:
    arguments, coercions = coerce_arguments(
        SKILL_LOAD.parameters, {"skill_name": NOTES, "include_all_docs": value}
    )
    assert arguments["include_all_docs"] is converted
    shown = f"include_all_docs: {json.dumps(value)} -> {json.dumps(converted)}"
    assert coercions[0].describe() == shown


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"timeout": 5.5}, "timeout: 5.5 is not of type 'integer'"),
        ({"timeout": "soon"}, "timeout: 'soon' is not of type 'integer'"),
        ({"timeout": None}, "timeout: None is not of type 'integer'"),
        ({"command": 5}, "command: 5 is not of type 'string'"),
        ({"env": {"A": 1}}, "env.A: 1 is not of type 'string'"),
        ({"output_files": "out/x.txt"}, "output_files: 'out/x.txt' is not of type 'array'"),
    ],
    ids=["fraction", "word", "null", "number-for-text", "number-in-env", "string-for-globs"],
)
def test_what_pydantic_refuses_stays_an_invalid_arguments_error(session, arguments, problem):
    """The same values make the reference's skill_run fail too (parity:
    tests/protocol/test_reference_parity.py, sequence lax-run-refused)."""
    call_error(
        session,
        "skill_run",
        {"skill": NOTES, "command": "true", **arguments},
        "invalid_arguments",
        f"invalid arguments for tool 'skill_run': {problem}.",
    )


def test_a_converted_call_runs_and_reports_the_conversion(session) -> None:
    outcome = call_ok(
        session,
        "skill_run",
        {"skill": NOTES, "command": "echo ran", "timeout": "5", "save_as_artifacts": "no"},
    )
    assert outcome.result["stdout"] == "ran\n"
    assert outcome.arguments == {
        "skill": NOTES,
        "command": "echo ran",
        "timeout": "5",
        "save_as_artifacts": "no",
    }  # as the model sent them
    assert [c.describe() for c in outcome.coercions] == [
        'timeout: "5" -> 5',
        'save_as_artifacts: "no" -> false',
    ]


def test_include_all_docs_yes_selects_every_doc(session) -> None:
    outcome = call_ok(session, "skill_load", {"skill_name": NOTES, "include_all_docs": "yes"})
    assert outcome.state_delta["temp:skill:docs:release-notes"] == "*"


def test_a_lone_string_for_docs_is_a_one_item_list(session) -> None:
    """The reference splits the string into characters (docs/protocol.md, divergences)."""
    outcome = call_ok(session, "skill_load", {"skill_name": NOTES, "docs": "docs/checklist.md"})
    assert outcome.state_delta["temp:skill:docs:release-notes"] == '["docs/checklist.md"]'
    assert [c.describe() for c in outcome.coercions] == [
        'docs: "docs/checklist.md" -> ["docs/checklist.md"]'
    ]
    selected = call_ok(
        session, "skill_select_docs", {"skill_name": NOTES, "docs": "docs/style-guide.md"}
    )
    assert selected.result["selected_docs"] == ["docs/style-guide.md"]


def test_null_docs_are_left_out(session) -> None:
    outcome = call_ok(session, "skill_load", {"skill_name": NOTES, "docs": None})
    assert outcome.state_delta["temp:skill:docs:release-notes"] == "[]"
    assert outcome.coercions == (Coercion(("docs",), None, LEFT_OUT),)
    assert outcome.coercions[0].describe() == "docs: null -> (left out)"


def test_only_the_named_lists_take_a_lone_string(session) -> None:
    call_error(
        session,
        "skill_run",
        {"skill": NOTES, "command": "true", "output_files": None},
        "invalid_arguments",
        "invalid arguments for tool 'skill_run': output_files: None is not of type 'array'.",
    )


def test_values_of_the_right_type_are_left_alone() -> None:
    arguments = {"skill": NOTES, "command": "true", "timeout": 5, "env": {"A": "1"}}
    assert coerce_arguments(SKILL_RUN.parameters, arguments) == (arguments, ())


def test_strict_sessions_do_not_convert() -> None:
    with SkillSession(REPOSITORY, lax_arguments=False) as strict:
        call_error(
            strict,
            "skill_load",
            {"skill_name": NOTES, "include_all_docs": "yes"},
            "invalid_arguments",
            "invalid arguments for tool 'skill_load': include_all_docs: 'yes' is not of type"
            " 'boolean'.",
        )


def test_the_trajectory_shows_each_conversion() -> None:
    outcome = run_conversation(
        REPOSITORY,
        "Notes?",
        script=[
            {"call": "skill_load", "args": {"skill_name": NOTES, "include_all_docs": "true"}},
            {"say": "Loaded."},
        ],
    )
    call = outcome.trajectory.calls[0]
    assert call.arguments == {"skill_name": NOTES, "include_all_docs": "true"}
    assert [c.describe() for c in call.coercions] == ['include_all_docs: "true" -> true']
    shown = outcome.trajectory.format().splitlines()
    assert '      coerced include_all_docs: "true" -> true' in shown


def test_a_recorded_model_that_sent_lax_arguments_replays_with_the_same_conversions(
    tmp_path,
) -> None:
    """A real model's lax values, recorded into a cassette, pass in replay as they did live."""
    cassette = tmp_path / "lax.json"
    script = [
        {"call": "skill_load", "args": {"skill_name": NOTES, "include_all_docs": "yes"}},
        {"call": "skill_run", "args": {"skill": NOTES, "command": "echo ok", "timeout": "5"}},
        {"say": "Ran."},
    ]
    with scripted_upstream(script) as upstream:
        recorded = run_conversation(
            REPOSITORY, "Run it.", cassette=cassette, settings=record_options(upstream)
        )
    replayed = run_conversation(REPOSITORY, "Run it.", cassette=cassette, transport="sdk")
    assert replayed.cassette.replayed == 3
    for outcome in (recorded, replayed):
        calls = outcome.trajectory.calls
        assert [[c.describe() for c in call.coercions] for call in calls] == [
            ['include_all_docs: "yes" -> true'],
            ['timeout: "5" -> 5'],
        ]
        assert [call.is_error for call in calls] == [False, False]
        assert calls[1].result["stdout"] == "ok\n"


def test_docs_as_an_object_are_its_keys(session) -> None:
    """The reference iterates the object: its keys are the docs, whatever their values."""
    outcome = call_ok(
        session, "skill_load", {"skill_name": NOTES, "docs": {"docs/checklist.md": True}}
    )
    assert outcome.state_delta["temp:skill:docs:release-notes"] == '["docs/checklist.md"]'
    assert [c.describe() for c in outcome.coercions] == [
        'docs: {"docs/checklist.md": true} -> ["docs/checklist.md"]'
    ]
    selected = call_ok(
        session,
        "skill_select_docs",
        {"skill_name": NOTES, "docs": {"docs/style-guide.md": False}, "mode": "add"},
    )
    assert selected.result["selected_docs"] == ["docs/checklist.md", "docs/style-guide.md"]


def test_skill_load_leaves_out_doc_items_that_are_not_text(session) -> None:
    outcome = call_ok(
        session, "skill_load", {"skill_name": NOTES, "docs": [1, "docs/checklist.md", None]}
    )
    assert outcome.state_delta["temp:skill:docs:release-notes"] == '["docs/checklist.md"]'
    assert [c.describe() for c in outcome.coercions] == [
        "docs[0]: 1 -> (left out)",
        "docs[2]: null -> (left out)",
    ]
    # The select tools refuse them, as the reference's result model does.
    call_error(
        session,
        "skill_select_docs",
        {"skill_name": NOTES, "docs": [1, "docs/checklist.md"]},
        "invalid_arguments",
        "invalid arguments for tool 'skill_select_docs': docs[0]: 1 is not of type 'string'.",
    )


@pytest.mark.parametrize("mode", ["ADD", " Add ", "add"])
def test_a_select_mode_in_another_case_is_the_mode_it_names(session, mode) -> None:
    call_ok(session, "skill_load", {"skill_name": NOTES, "docs": ["docs/checklist.md"]})
    outcome = call_ok(
        session,
        "skill_select_docs",
        {"skill_name": NOTES, "docs": ["docs/style-guide.md"], "mode": mode},
    )
    assert outcome.result["mode"] == "add"
    assert outcome.result["selected_docs"] == ["docs/checklist.md", "docs/style-guide.md"]
    shown = [] if mode == "add" else [f'mode: {json.dumps(mode)} -> "add"']
    assert [c.describe() for c in outcome.coercions] == shown
    call_error(
        session,
        "skill_select_docs",
        {"skill_name": NOTES, "mode": "merge"},
        "invalid_arguments",
        "invalid arguments for tool 'skill_select_docs': mode: 'merge' is not one of"
        " ['add', 'replace', 'clear'].",
    )


def test_skill_list_leaves_out_the_mode_the_reference_ignores(session) -> None:
    outcome = call_ok(session, "skill_list", {"mode": "available"})
    assert outcome.result == REPOSITORY.names()
    assert [c.describe() for c in outcome.coercions] == ['mode: "available" -> (left out)']
    call_error(
        session,
        "skill_list",
        {"extra": 1},
        "invalid_arguments",
        "invalid arguments for tool 'skill_list': Additional properties are not allowed"
        " ('extra' was unexpected).",
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("skill_list", {"mode": "all"}, "('mode' was unexpected)"),
        ("skill_load", {"skill_name": NOTES, "docs": {"docs/checklist.md": True}}, "docs: "),
        ("skill_load", {"skill_name": NOTES, "docs": [1]}, "docs[0]: 1 is not of type"),
        ("skill_select_docs", {"skill_name": NOTES, "mode": "ADD"}, "mode: 'ADD' is not one"),
        ("skill_run", {"skill": NOTES, "command": "true", "timeout": -1}, "timeout: -1 is less"),
    ],
)
def test_strict_sessions_refuse_what_the_reference_tolerates(tool, arguments, message) -> None:
    with SkillSession(REPOSITORY, lax_arguments=False) as strict:
        call_ok(strict, "skill_load", {"skill_name": NOTES})
        outcome = strict.call(tool, arguments)
        assert outcome.error_code == "invalid_arguments"
        assert message in outcome.result["message"]
