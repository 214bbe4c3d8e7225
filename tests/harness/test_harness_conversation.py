"""Conversations of several user messages: per-turn scripts or one source for all, the
reference's load modes between user turns, and expectations per turn and for the whole."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from pytest_agent_skills.harness import (
    TRANSPORTS,
    Conversation,
    ConversationFields,
    ExpectationError,
    HarnessError,
    RunSettings,
    ScriptExhaustedError,
    UnusedTurnsError,
    UserTurn,
    assert_trajectory,
    run_conversation,
)
from pytest_agent_skills.repository import SkillRepository
from tests.support.harness import SKILLS, record_options, scripted_upstream

REPOSITORY = SkillRepository([SKILLS])
LOAD_NOTES = {"call": "skill_load", "args": {"skill_name": "notes"}}
LIST_DOCS = {"call": "skill_list_docs", "args": {"skill_name": "notes"}}
TWO_TURNS = [
    {"user": "Load the notes skill.", "script": [LOAD_NOTES, {"say": "Loaded."}]},
    {"user": "Which docs does it have?", "script": [LIST_DOCS, {"say": "Two docs."}]},
]


def converse(turns: Any = TWO_TURNS, **kwargs: Any):
    return run_conversation(REPOSITORY, turns=turns, **kwargs)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_each_user_turn_answers_from_its_own_script(transport) -> None:
    trajectory = converse(transport=transport).trajectory
    assert trajectory.users == ["Load the notes skill.", "Which docs does it have?"]
    assert [(part.start, part.end, part.final) for part in trajectory.user_turns] == [
        (0, 2, "Loaded."),
        (2, 4, "Two docs."),
    ]
    assert trajectory.call_names == ["skill_load", "skill_list_docs"]
    assert trajectory.final == "Two docs."
    second = trajectory.for_user_turn(1)
    assert [call.name for call in second.calls] == ["skill_list_docs"]
    assert [request.turn for request in second.requests] == [0, 1]
    # The history of the first user turn is part of the second one's requests.
    roles = [message["role"] for message in trajectory.requests[2].body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]


def test_one_script_for_the_whole_conversation_ends_a_turn_at_each_final_text() -> None:
    script = [LOAD_NOTES, {"say": "Loaded."}, LIST_DOCS, {"say": "Two docs."}]
    trajectory = converse(["Load it.", "Docs?"], script=script).trajectory
    assert [part.final for part in trajectory.user_turns] == ["Loaded.", "Two docs."]
    assert [call.name for call in trajectory.for_user_turn(1).calls] == ["skill_list_docs"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_turn_whose_script_runs_out_is_named(transport) -> None:
    turns = [TWO_TURNS[0], {"user": "Docs?", "script": [LIST_DOCS]}]
    with pytest.raises(ScriptExhaustedError) as caught:
        converse(turns, transport=transport)
    assert str(caught.value) == (
        "script exhausted: turns[1] asked the model for its turn 1 but its script has only 1"
        ' turn(s); the last one was: call skill_list_docs({"skill_name": "notes"}). End the'
        " turn's script with a final turn {say: ...} or add the missing turns."
    )
    assert caught.value.trajectory.call_names == ["skill_load", "skill_list_docs"]


def test_turns_left_in_a_turn_script_are_named_with_the_turn() -> None:
    turns = [
        {"user": "Load.", "script": [{"say": "Done."}, LOAD_NOTES]},
        {"user": "Docs?", "script": [{"say": "None."}]},
    ]
    with pytest.raises(UnusedTurnsError) as caught:
        converse(turns)
    assert str(caught.value) == (
        "unused turns: turns[0] ended after its turn 0 but its script has 1 more:\n"
        '  turn 1: call skill_load({"skill_name": "notes"})\n'
        "Remove them, or find out why the turn ended early (a final text turn ends it)."
    )
    assert converse(turns, allow_unused=True).trajectory.final == "None."


def test_a_cassette_serves_the_whole_conversation(tmp_path) -> None:
    cassette = tmp_path / "two.json"
    script = [LOAD_NOTES, {"say": "Loaded."}, LIST_DOCS, {"say": "Two docs."}]
    with scripted_upstream(script) as upstream:
        recorded = converse(
            ["Load it.", "Docs?"], cassette=cassette, settings=record_options(upstream)
        )
    replayed = converse(["Load it.", "Docs?"], cassette=cassette, transport="sdk")
    assert replayed.cassette.replayed == 4
    assert replayed.trajectory.comparable() == recorded.trajectory.comparable()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"user": "x", "turns": ["y"], "script": [{"say": "z"}]}, "give exactly one of user='...'"),
        ({"turns": TWO_TURNS, "script": [{"say": "z"}]}, "the turns have their own scripts"),
        ({"turns": [TWO_TURNS[0], {"user": "b"}]}, "turns[1] has no script, while other turns"),
        (
            {"turns": [{"user": "a", "scirpt": []}]},
            "unknown key 'scirpt' in turns[0]. Did you mean",
        ),
        ({"turns": []}, "turns=[...] is a non-empty list of user turns"),
        ({"turns": ["a"], "script": [{"say": "z"}], "load_mode": "always"}, "unknown load mode"),
    ],
    ids=["user-and-turns", "scripts-twice", "script-missing", "typo", "empty", "load-mode"],
)
def test_a_conversation_given_wrongly_is_refused(arguments, message) -> None:
    with pytest.raises(HarnessError) as caught:
        run_conversation(REPOSITORY, **arguments)
    assert message in str(caught.value)


# --- load modes -------------------------------------------------------------------------------

LOADED_NOTES = "[Loaded] notes"


def test_turn_mode_unloads_skills_at_the_next_user_message() -> None:
    """The reference's default: loaded skills and selections last one user turn."""
    trajectory = converse().trajectory
    assert trajectory.load_mode == "turn"
    assert LOADED_NOTES in trajectory.requests[1].system
    assert LOADED_NOTES not in trajectory.requests[2].system
    assert trajectory.user_turns[0].state == {
        "temp:skill:loaded:notes": "1",
        "temp:skill:docs:notes": "[]",
    }
    assert trajectory.requests[2].state_delta == {
        "temp:skill:loaded:notes": None,
        "temp:skill:docs:notes": None,
    }
    assert trajectory.state == {}
    assert (
        "  (load mode turn: removed temp:skill:loaded:notes, temp:skill:docs:notes)"
        in trajectory.format().splitlines()
    )


def test_once_mode_shows_a_loaded_skill_in_one_request() -> None:
    script = [LOAD_NOTES, LIST_DOCS, {"say": "Done."}]
    trajectory = run_conversation(REPOSITORY, "Notes?", script=script, load_mode="once").trajectory
    assert [LOADED_NOTES in request.system for request in trajectory.requests] == [
        False,
        True,
        False,
    ]
    assert trajectory.requests[1].state_delta == {
        "temp:skill:loaded:notes": None,
        "temp:skill:docs:notes": None,
    }
    assert trajectory.state == {}


def test_session_mode_keeps_skills_loaded_under_keys_without_temp() -> None:
    trajectory = converse(load_mode="session").trajectory
    assert [LOADED_NOTES in request.system for request in trajectory.requests] == [
        False,
        True,
        True,
        True,
    ]
    assert trajectory.state == {"skill:loaded:notes": "1", "skill:docs:notes": "[]"}
    assert all(not request.state_delta for request in trajectory.requests)


# --- expectations per turn --------------------------------------------------------------------


def test_each_turn_is_checked_on_its_own_part_of_the_conversation() -> None:
    trajectory = converse().trajectory
    assert_trajectory(
        trajectory,
        {"calls": [{"name": "skill_load"}, {"name": "skill_list_docs"}], "final": "Two docs."},
        turns=[
            {
                "calls": [{"name": "skill_load", "args": {"skill_name": "notes"}}],
                "final": "Loaded.",
            },
            {
                "calls": {
                    "mode": "exact",
                    "args": "ignore",
                    "items": [{"name": "skill_list_docs"}],
                },
                "requests": [{"turn": 0, "system_excludes": LOADED_NOTES}],
                "state": {"temp:skill:loaded:notes": {"exists": False}},
                "final": {"contains": "docs"},
            },
        ],
    )


def test_a_turn_expectation_failure_names_the_turn() -> None:
    with pytest.raises(ExpectationError) as caught:
        converse(
            expect={"final": "Two docs."},
            turns=[
                TWO_TURNS[0],
                {**TWO_TURNS[1], "expect": {"calls": [{"name": "skill_load"}]}},
            ],
        )
    lines = str(caught.value).splitlines()
    assert lines[:2] == [
        "trajectory: 1 expectation(s) not met",
        "- turns[1].expect.calls.items[0]: mode exact, args exact: call #0 skill_list_docs"
        ' {"skill_name": "notes"} does not match item 0 (skill_load): name \'skill_list_docs\''
        " is not 'skill_load'",
    ]
    assert "Expected of turns[1]:" in lines
    assert "  user turn 1: Which docs does it have?" in lines


# --- a conversation is one value ----------------------------------------------------------------


def test_a_conversation_is_a_value_its_variants_made_by_replace() -> None:
    conversation = Conversation(REPOSITORY, turns=TWO_TURNS)
    assert all(isinstance(turn, UserTurn) for turn in conversation.turns or ())
    assert conversation == Conversation(REPOSITORY, turns=TWO_TURNS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        conversation.max_turns = 3  # type: ignore[misc]

    first = run_conversation(conversation).trajectory
    other = dataclasses.replace(conversation, transport="sdk")
    again = run_conversation(other, settings=RunSettings(transport="direct")).trajectory
    assert again.comparable() == first.comparable()
    # The keyword form builds the same conversation.
    assert run_conversation(REPOSITORY, turns=TWO_TURNS).trajectory.comparable() == (
        first.comparable()
    )


def test_a_variant_is_checked_as_it_is_made() -> None:
    conversation = Conversation(REPOSITORY, "Hello.", script=[{"say": "Hi."}])
    with pytest.raises(HarnessError, match=re.escape("give exactly one of user='...'")):
        dataclasses.replace(conversation, turns=["Hello again."])
    one_source = re.escape("give exactly one of script=... or cassette=...")
    with pytest.raises(HarnessError, match=one_source):
        dataclasses.replace(conversation, cassette="c.json")


def test_a_whole_conversation_takes_no_fields_beside_it() -> None:
    conversation = Conversation(REPOSITORY, "Hello.", script=[{"say": "Hi."}])
    with pytest.raises(HarnessError, match=r"dataclasses.replace\(conversation, ...\)"):
        run_conversation(conversation, max_turns=3)


def test_the_keyword_fields_are_the_conversations_fields() -> None:
    fields = {field.name for field in dataclasses.fields(Conversation)}
    assert set(ConversationFields.__annotations__) == fields - {"repository", "user"}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_conversation_that_runs_no_command_makes_no_workspace(tmp_path, transport) -> None:
    """Loading, listing and selecting docs need no workspace: none is made, inputs or not (the
    runtime keeps every workspace it makes, so one made and removed would still be there)."""
    from pytest_agent_skills.workspace import create_runtime

    select = {"skill_name": "notes", "docs": ["docs/glossary.md"], "mode": "add"}
    turns = [LOAD_NOTES, LIST_DOCS, {"call": "skill_select_docs", "args": select}]
    done = {"say": "Done."}
    with create_runtime("local", work_root=tmp_path, keep_workspaces=True) as runtime:
        outcome = run_conversation(
            REPOSITORY,
            "Notes in house style, please.",
            script=[*turns, done],
            inputs={"draft.txt": "notes"},
            transport=transport,
            settings=RunSettings(runtime=runtime),
        )
        assert [call.is_error for call in outcome.trajectory.calls] == [False] * 3
        assert outcome.trajectory.workspace is None
        assert list(tmp_path.iterdir()) == []
        ran = run_conversation(
            REPOSITORY,
            "Count the notes.",
            script=[{"call": "skill_run", "args": {"skill": "notes", "command": "true"}}, done],
            inputs={"draft.txt": "notes"},
            transport=transport,
            settings=RunSettings(runtime=runtime),
        )
        assert ran.trajectory.files["work/inputs/draft.txt"] == b"notes"
        assert [path.name for path in tmp_path.iterdir()] == [ran.trajectory.workspace.name]
