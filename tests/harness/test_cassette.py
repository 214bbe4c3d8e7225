"""Cassettes: recording from a loopback upstream, replay, the record modes, matching,
the miss report, unused interactions and redaction of secrets on write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agent_skills.harness import (
    CassetteFormatError,
    CassetteMissError,
    HarnessError,
    NoCassetteError,
    Redactor,
    Reply,
    RunSettings,
    ScriptedBackend,
    UnusedInteractionsError,
    Upstream,
    run_conversation,
)
from pytest_agent_skills.harness.cassette import Matcher
from pytest_agent_skills.repository import SkillRepository
from tests.support.harness import SKILLS, only_loopback, record_options, scripted_upstream

SCRIPT = [
    {"call": "skill_load", "args": {"skill_name": "notes"}},
    {"call": "skill_run", "args": {"skill": "notes", "command": "echo token=$TOKEN"}},
    {"say": "Done."},
]
REPOSITORY = SkillRepository([SKILLS])


def converse(cassette: Path, options: RunSettings, user: str = "Take notes.", **kwargs: Any):
    return run_conversation(REPOSITORY, user, cassette=cassette, settings=options, **kwargs)


def record(tmp_path: Path, script: list[Any] = SCRIPT, user: str = "Take notes.", **kwargs: Any):
    cassette = tmp_path / "cassettes" / "notes.json"
    with scripted_upstream(script) as upstream:
        outcome = converse(cassette, record_options(upstream), user, **kwargs)
    return cassette, outcome


def test_a_recorded_cassette_is_readable_json_and_replays_offline(tmp_path, monkeypatch) -> None:
    cassette, recorded = record(tmp_path)
    assert recorded.cassette.recorded == 3
    text = cassette.read_text()
    data = json.loads(text)
    assert data["format"] == "pytest-agent-skills cassette"
    assert len(data["interactions"]) == 3
    assert text.count("\n") > 50, "indented, one value per line"
    first = data["interactions"][0]
    assert first["request"]["body"]["messages"][-1] == {"role": "user", "content": "Take notes."}
    assert first["response"]["body"]["choices"][0]["message"]["tool_calls"][0]["function"] == {
        "name": "skill_load",
        "arguments": '{"skill_name": "notes"}',
    }
    with only_loopback(monkeypatch) as blocked:
        replayed = converse(cassette, RunSettings(record_mode="none"))
    assert blocked == []
    assert (replayed.cassette.replayed, replayed.cassette.recorded) == (3, 0)
    assert replayed.trajectory.comparable() == recorded.trajectory.comparable()


class SecretHeadersBackend(ScriptedBackend):
    """An upstream that answers with an organisation id and a cookie, as real ones do."""

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        reply = super().respond(body, headers)
        assert headers["Authorization"] == "Bearer sk-live-0123456789abcdef"
        reply.headers.update(
            {"openai-organization": "org-SecretOrg42", "set-cookie": "session=cookie-secret-77"}
        )
        return reply


def test_a_recorded_cassette_contains_no_secret(tmp_path, monkeypatch) -> None:
    api_key, custom = "sk-live-0123456789abcdef", "hunter2-custom-secret-value"
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    monkeypatch.setenv("MY_SERVICE_TOKEN", custom)
    cassette = tmp_path / "secret.json"
    with scripted_upstream(SCRIPT, SecretHeadersBackend) as upstream:
        options = RunSettings(
            record_mode="once",
            upstream=Upstream(upstream.base_url, api_key),
            secret_env=("OPENAI_API_KEY", "MY_SERVICE_TOKEN"),
        )
        outcome = converse(cassette, options, f"My token is {custom}.", env={"TOKEN": custom})
    assert custom in json.dumps(outcome.trajectory.calls[1].result), "the secret was in the run"
    text = cassette.read_text()
    for secret in (api_key, custom, "org-SecretOrg42", "cookie-secret-77"):
        assert secret not in text
    assert "<redacted:MY_SERVICE_TOKEN>" in text
    interaction = json.loads(text)["interactions"][0]
    assert interaction["request"]["headers"]["Authorization"] == "<redacted>"
    assert interaction["response"]["headers"]["openai-organization"] == "<redacted>"
    # The live request is redacted the same way before matching, so replay still matches.
    replayed = converse(
        cassette,
        RunSettings(secret_env=("MY_SERVICE_TOKEN",)),
        f"My token is {custom}.",
        env={"TOKEN": custom},
    )
    assert replayed.cassette.replayed == 3


def test_no_cassette_is_its_own_error(tmp_path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(NoCassetteError) as caught:
        converse(missing, RunSettings(record_mode="none"))
    assert str(caught.value) == (
        f"no cassette: {missing} does not exist (record mode 'none' never records). Record it"
        " against a real endpoint with --skills-record=once and --skills-upstream-url URL."
    )


def test_a_miss_names_the_closest_recorded_request_with_a_diff(tmp_path) -> None:
    cassette, _ = record(tmp_path)
    with pytest.raises(CassetteMissError) as caught:
        converse(cassette, RunSettings(), "Take other notes.")
    lines = str(caught.value).splitlines()
    assert lines[0] == (
        f"no match in cassette {cassette} for request #0 (record mode 'none'); 3 interaction(s)"
        " recorded, 0 already played."
    )
    assert lines[1] == "Closest recorded request: interaction #0 (similarity 99%):"
    assert '-   "content": "Take notes.",' in lines
    assert '+   "content": "Take other notes.",' in lines
    assert lines[-1] == (
        "Re-record with --skills-record=new (or all), or list a volatile field in"
        " model.match_ignore."
    )
    sent = caught.value.trajectory.requests[0].body["messages"][-1]
    assert sent["content"] == "Take other notes."


def test_asking_more_often_than_recorded_is_a_miss(tmp_path) -> None:
    cassette, _ = record(tmp_path, [{"say": "Hello."}])
    data = json.loads(cassette.read_text())
    data["interactions"][0]["response"]["body"]["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "skill_list", "arguments": "{}"}}
        ],
    }
    data["interactions"].append(data["interactions"][0])  # same request, but it never recurs
    cassette.write_text(json.dumps(data))
    with pytest.raises(CassetteMissError, match=r"request #1 .* 1 already played"):
        converse(cassette, RunSettings())


def test_unused_interactions_fail_unless_allowed(tmp_path) -> None:
    cassette, _ = record(tmp_path)
    data = json.loads(cassette.read_text())
    data["interactions"].insert(0, data["interactions"][2])  # an extra final turn first
    data["interactions"][0] = json.loads(json.dumps(data["interactions"][0]))
    data["interactions"][0]["request"]["body"]["messages"][-1]["content"] = "never asked"
    cassette.write_text(json.dumps(data))
    with pytest.raises(UnusedInteractionsError) as caught:
        converse(cassette, RunSettings())
    assert str(caught.value) == (
        f"unused interactions in cassette {cassette}: #0 were never requested (3 replayed). The"
        " conversation ended earlier than when it was recorded; re-record with"
        " --skills-record=all, or set model.allow_unused: true."
    )
    assert converse(cassette, RunSettings(), allow_unused=True).cassette.unused == 1


def test_mode_once_replays_an_existing_cassette_without_an_upstream(tmp_path) -> None:
    cassette, _ = record(tmp_path)
    outcome = converse(cassette, RunSettings(record_mode="once"))
    assert (outcome.cassette.recorded, outcome.cassette.replayed) == (0, 3)


def test_mode_new_records_only_what_does_not_match(tmp_path) -> None:
    cassette, _ = record(tmp_path)
    with scripted_upstream([{"say": "Other."}]) as upstream:
        outcome = converse(cassette, record_options(upstream, "new"), "Something else.")
    assert (outcome.cassette.recorded, outcome.cassette.replayed) == (1, 0)
    assert len(json.loads(cassette.read_text())["interactions"]) == 4


def test_mode_all_records_everything_again(tmp_path) -> None:
    cassette, _ = record(tmp_path)
    with scripted_upstream([{"say": "Fresh."}]) as upstream:
        outcome = converse(cassette, record_options(upstream, "all"))
        assert upstream.requests == 1
    assert outcome.trajectory.final == "Fresh."
    assert len(json.loads(cassette.read_text())["interactions"]) == 1


def test_recording_needs_an_upstream(tmp_path) -> None:
    cassette = tmp_path / "new.json"
    with pytest.raises(HarnessError) as caught:
        converse(cassette, RunSettings(record_mode="once"))
    assert str(caught.value) == (
        f"cassette {cassette}: record mode 'once' needs an upstream endpoint to record from; set"
        " --skills-upstream-url (env SKILLS_UPSTREAM_URL) to an OpenAI-compatible base URL."
    )
    assert not cassette.exists()


def test_ignored_fields_are_configurable(tmp_path) -> None:
    cassette, _ = record(tmp_path, model_name="model-a")
    with pytest.raises(CassetteMissError, match='\n- "model": "model-a",\n'):
        converse(cassette, RunSettings(), model_name="model-b")
    outcome = converse(cassette, RunSettings(match_ignore=("model",)), model_name="model-b")
    assert outcome.cassette.replayed == 3
    outcome = converse(cassette, RunSettings(), model_name="model-b", match_ignore=["model"])
    assert outcome.cassette.replayed == 3


def test_a_recorded_stream_replays_as_plain_and_as_stream(tmp_path) -> None:
    cassette = tmp_path / "streamed.json"
    with scripted_upstream(SCRIPT) as upstream:
        recorded = converse(cassette, record_options(upstream), transport="sdk-stream")
    interaction = json.loads(cassette.read_text())["interactions"][0]
    assert interaction["response"]["streamed"] is True
    assert interaction["response"]["body"]["object"] == "chat.completion"
    for transport in ("sdk", "sdk-stream"):
        replayed = converse(cassette, RunSettings(), transport=transport)
        assert replayed.trajectory.comparable() == recorded.trajectory.comparable()


def test_a_cassette_that_is_not_json_names_the_file(tmp_path) -> None:
    cassette = tmp_path / "broken.json"
    cassette.write_text("{not json")
    with pytest.raises(HarnessError, match=r"broken\.json: not a readable JSON cassette"):
        converse(cassette, RunSettings())


class FailingBackend(ScriptedBackend):
    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        return Reply({"error": {"message": "quota exceeded"}}, 429)


def test_an_upstream_error_while_recording_is_reported_and_nothing_is_written(tmp_path) -> None:
    cassette = tmp_path / "failed.json"
    with (
        scripted_upstream(SCRIPT, FailingBackend) as upstream,
        pytest.raises(HarnessError) as caught,
    ):
        converse(cassette, record_options(upstream))
    assert str(caught.value) == (
        f"recording {cassette}: upstream {upstream.base_url}/chat/completions answered HTTP 429:"
        ' {"error": {"message": "quota exceeded"}}'
    )
    assert not cassette.exists()


def test_redaction_names_each_secret_variable_and_hides_extra_values_plainly() -> None:
    redactor = Redactor(
        ["OPENAI_API_KEY", "value_token"],
        environ={"OPENAI_API_KEY": "sk-live-123456", "value_token": "tok-abcdef"},
        extra_values=["sk-live-123456-long", "xtra-secret"],
    )
    text = "a sk-live-123456 b tok-abcdef c sk-live-123456-long d xtra-secret e"
    assert redactor.redact({"body": text, "Authorization": "Bearer x"}) == {
        "body": "a <redacted:OPENAI_API_KEY> b <redacted:value_token> c <redacted> d <redacted> e",
        "Authorization": "<redacted>",
    }


class NotJsonBackend(ScriptedBackend):
    """An upstream behind a proxy that answers an HTML page with status 200."""

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        return Reply({"unused": True})


def test_an_upstream_answer_that_is_not_json_is_a_model_error(tmp_path, monkeypatch) -> None:
    from pytest_agent_skills.harness import LoopbackServer, ModelError
    from pytest_agent_skills.harness.server import HttpAnswer

    def html_page(method, target, headers, data):
        return HttpAnswer(200, "text/html", b"<html>Sign in</html>")

    cassette = tmp_path / "tape.json"
    with LoopbackServer() as upstream, pytest.raises(ModelError) as caught:
        monkeypatch.setattr(upstream, "answer", html_page)  # this server only
        options = RunSettings(record_mode="once", upstream=Upstream(upstream.base_url))
        run_conversation(REPOSITORY, "Hi.", cassette=cassette, settings=options)
    assert str(caught.value) == (
        f"recording {cassette}: upstream {upstream.base_url}/chat/completions answered a body"
        " that is not JSON (Expecting value: line 1 column 1 (char 0)): <html>Sign in</html>"
    )
    assert not cassette.exists()


def test_an_upstream_answer_that_is_no_completion_is_a_model_error(tmp_path) -> None:
    from pytest_agent_skills.harness import ModelError

    cassette = tmp_path / "tape.json"
    with (
        scripted_upstream([{"say": "x"}], NotJsonBackend) as upstream,
        pytest.raises(ModelError) as caught,
    ):
        converse(cassette, record_options(upstream))
    assert str(caught.value) == (
        f"recording {cassette}: upstream {upstream.base_url}/chat/completions answered something"
        ' that is not a chat completion (no choices): {"unused": true}'
    )


NOT_A_COMPLETION = "the response body is not a chat completion"


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        ({"status": 200}, f"{NOT_A_COMPLETION} (null instead of a JSON object)"),
        ({"body": "<html>"}, f"{NOT_A_COMPLETION} (a string \"<html>\" instead of a JSON object)"),
        ({"body": {"choices": []}}, f"{NOT_A_COMPLETION} (no choices)"),
        (
            {"body": {"choices": [{"text": "hi"}]}},
            f"{NOT_A_COMPLETION} (a first choice without a 'message' object)",
        ),
        (
            {"body": {"choices": [{"message": {"content": 3}}]}},
            f"{NOT_A_COMPLETION} (a message whose 'content' is neither text nor null)",
        ),
        (
            {"body": {"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}},
            f"{NOT_A_COMPLETION} (tool call #0 without a function name)",
        ),
        ({"status": "ok", "body": {}}, "the response status 'ok' is not an HTTP status number"),
    ],
)
def test_a_cassette_response_of_the_wrong_shape_names_the_interaction(
    tmp_path, response: dict[str, Any], problem: str
) -> None:
    cassette, _ = record(tmp_path, [{"say": "Hello."}])
    data = json.loads(cassette.read_text())
    data["interactions"][0]["response"] = response
    cassette.write_text(json.dumps(data))
    with pytest.raises(CassetteFormatError) as caught:
        converse(cassette, RunSettings())
    assert str(caught.value) == (
        f"{cassette}: interaction #0: {problem}; fix the file or record it again with"
        " --skills-record=all"
    )


_WORDS = st.sampled_from(
    ["a", "ws_run1", "run_20240101T000000", "/root/x", "duration_ms", "content", '{"x": 1}']
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | _WORDS,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["content", "arguments", "id", "created", "role", "x"]), inner, max_size=3
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, _JSON)
def test_matching_compares_as_the_canonical_forms_do(live: Any, recorded: Any) -> None:
    matcher = Matcher(substitutions={"/root/x": "<skills-root-0>"})
    assert matcher.same(live, recorded) == (
        matcher.canonical(live) == matcher.canonical(recorded)
    )
    assert matcher.same(live, live)


def test_a_replayed_request_that_differs_only_in_volatile_parts_matches() -> None:
    matcher = Matcher(substitutions={"/tmp/ws_live": "<workspace>"})
    recorded = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "content": '{"duration_ms": 3, "stdout": "<workspace>/out"}'},
        ],
        "tools": [{"type": "function", "function": {"name": "skill_run"}}],
    }
    live = json.loads(json.dumps(recorded))
    live["messages"][1]["content"] = '{"duration_ms": 41, "stdout": "/tmp/ws_live/out"}'
    assert matcher.same(live, recorded)
    live["messages"][0]["content"] = "hello"
    assert not matcher.same(live, recorded)


def test_an_assistant_turn_of_tool_calls_goes_back_with_empty_text_content(tmp_path) -> None:
    """OpenAI's schema takes ``""`` beside ``tool_calls`` (content is optional there);
    llama.cpp's server refuses null and an absent content: ``""`` is sent."""
    cassette, _ = record(tmp_path)
    data = json.loads(cassette.read_text())
    echoed = data["interactions"][1]["request"]["body"]["messages"][-2]
    assert echoed["role"] == "assistant" and echoed["tool_calls"]
    assert echoed["content"] == ""
    answered = data["interactions"][0]["response"]["body"]["choices"][0]["message"]
    assert answered["content"] is None  # the completion itself, as recorded


def test_a_cassette_recorded_with_null_content_beside_tool_calls_still_replays(tmp_path) -> None:
    cassette, _ = record(tmp_path)
    data = json.loads(cassette.read_text())
    for interaction in data["interactions"]:
        for message in interaction["request"]["body"]["messages"]:
            if message.get("tool_calls"):
                message["content"] = None  # as the harness sent it before
    cassette.write_text(json.dumps(data))
    replayed = converse(cassette, RunSettings())
    assert replayed.cassette.replayed == 3
