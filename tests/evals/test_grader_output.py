"""The grader's structured output, negotiated with endpoints that refuse a mode the way real
servers do (llama.cpp's server, OpenAI's API, LM Studio, a proxy that knows no
``response_format``); what is kept, recorded, replayed and reported; refusals that asking
again cannot change are not asked again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.evals.documents.benchmark_model import BenchmarkDocument
from pytest_agent_skills.evals.report.write import write_report
from pytest_agent_skills.evals.run.grader import json_object_in, parse_grading
from pytest_agent_skills.evals.run.grader_output import NEGOTIATED
from pytest_agent_skills.evals.run.transport import final_rejection
from pytest_agent_skills.evals.suite.output_folder import write_benchmark
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from pytest_agent_skills.harness import Upstream
from tests.support.evals import (
    REFUSALS,
    Behaviour,
    fake_endpoint,
    grader_mode,
    recording,
    replaying,
    write_eval_skill,
    written,
)
from tests.support.harness import only_loopback


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return write_eval_skill(tmp_path)


def _record(skill: Path, behaviour: Behaviour, **changes: Any) -> tuple[Any, dict[str, Any]]:
    changes = {"runs": 1, "jobs": 1, **changes}
    with fake_endpoint(behaviour) as (endpoint, url):
        outcome = run_benchmark(EvalRequest(skill, recording(url, skill.parent.parent, **changes)))
    return endpoint, written(outcome.document)


def _without_timestamp(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "metadata": {**document["metadata"], "timestamp": None}}


def test_an_endpoint_that_takes_a_json_schema_is_asked_with_one(skill: Path) -> None:
    endpoint, document = _record(skill, Behaviour())
    assert set(endpoint.grader_modes) == {"json_schema"}
    assert document["metadata"]["grader_output"] == "json_schema"
    assert not any("response_format" in note for note in document["notes"])


def test_llama_cpp_refusing_json_schema_is_asked_for_json_object_and_kept(
    skill: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    behaviour = Behaviour(refuses={"json_schema": REFUSALS["llama.cpp json_schema"]})
    endpoint, document = _record(skill, behaviour, runs=2)
    runs = document["runs"]
    assert not any(run["error"] for run in runs)
    # Refused once (HTTP 500 naming the field: not asked again), then kept for every grading.
    graded = len(runs)
    assert endpoint.grader_modes == ["json_schema"] + ["json_object"] * graded
    assert document["metadata"]["grader_output"] == "json_object"
    # The schema beside json_object (which this server enforces as a grammar) admits only the
    # expectations asked, once each.
    asked = next(body for body in endpoint.bodies if grader_mode(body) == "json_object")
    listed = asked["response_format"]["schema"]["properties"]["expectations"]
    assert listed["minItems"] == listed["maxItems"] == 1
    assert listed["items"]["properties"]["text"]["enum"] == [
        "The answer gives the mean the script computed"
    ]
    assert (
        "The grader's endpoint refused response_format json_schema: its answers were asked for"
        " as json_object (with the schema beside it)"
    ) in document["notes"]

    with only_loopback(monkeypatch) as off_loopback:
        replayed = run_benchmark(EvalRequest(skill, replaying(skill.parent.parent, runs=2)))
    assert off_loopback == []
    assert _without_timestamp(written(replayed.document)) == _without_timestamp(document)


def test_the_kept_mode_is_per_endpoint(skill: Path) -> None:
    refusing = Behaviour(refuses={"json_schema": REFUSALS["openai json_schema"]})
    first, _ = _record(skill, refusing)
    again, _ = _record(skill, refusing)  # another endpoint (port): negotiated anew
    assert first.grader_modes[:2] == again.grader_modes[:2] == ["json_schema", "json_object"]


def test_an_endpoint_that_refuses_both_formats_is_asked_in_plain_text(
    skill: Path, tmp_path: Path
) -> None:
    behaviour = Behaviour(
        refuses={
            "json_schema": REFUSALS["unknown field"],
            "json_object": REFUSALS["lmstudio json_object"],
        },
        chatty_grader=True,
    )
    endpoint, document = _record(skill, behaviour)
    assert not any(run["error"] for run in document["runs"])
    assert endpoint.grader_modes[:3] == ["json_schema", "json_object", "text"]
    assert set(endpoint.grader_modes[3:]) == {"text"}
    assert document["metadata"]["grader_output"] == "text"
    assert any("asked for as plain text" in note for note in document["notes"])

    out = tmp_path / "out"
    write_benchmark(out, BenchmarkDocument.model_validate(document), [])
    page = write_report(out).read_text()
    assert "<dt>grader output</dt><dd>text</dd>" in page


def test_a_refusal_of_every_mode_is_the_first_refusal_and_changes_nothing(skill: Path) -> None:
    too_long = (400, {"error": {"message": "This model's maximum context length is 8192"}})
    behaviour = Behaviour(refuses=dict.fromkeys(("json_schema", "json_object", "text"), too_long))
    with fake_endpoint(behaviour) as (endpoint, url):
        options = recording(url, skill.parent.parent, runs=1, jobs=1)
        document = written(run_benchmark(EvalRequest(skill, options)).document)
    runs = document["runs"]
    assert runs and all(run["error"]["kind"] == "model" for run in runs)
    assert "answered HTTP 400: " in runs[0]["error"]["message"]
    assert "maximum context length" in runs[0]["error"]["message"]
    # Each mode asked once per grading: a 400 is not asked again.
    assert endpoint.grader_modes == ["json_schema", "json_object", "text"] * len(runs)
    assert document["metadata"]["grader_output"] is None
    assert NEGOTIATED.current(Upstream(url).endpoint, "fake-grader") == "json_schema"


def test_only_answers_that_refuse_the_request_itself_are_final() -> None:
    body = {"model": "m", "messages": [], "response_format": {}}
    llama_cpp = json.dumps(REFUSALS["llama.cpp json_schema"][1])
    assert final_rejection(500, llama_cpp, body)
    assert final_rejection(500, json.dumps({"error": 'no "response_format" here'}), body)
    assert final_rejection(400, "Bad request", body)
    assert final_rejection(422, "", body)
    # Server trouble, rate limits and a model that is loading are worth asking again.
    assert not final_rejection(500, "The server is overloaded, try later", body)
    assert not final_rejection(503, "the 'model' is loading", body)
    assert not final_rejection(429, "'messages' come too fast", body)
    assert not final_rejection(500, "'response_format'", {"model": "m", "messages": []})


@pytest.mark.parametrize(
    "reply",
    [
        '{"expectations": [{"text": "A", "passed": true, "evidence": "e"}]}',
        'Sure:\n```json\n{"expectations": [{"text": "A", "passed": true, "evidence": "e"}]}\n```',
        'The grading: {"expectations": [{"text": "A", "passed": true, "evidence": "e"}]} ok',
        '```\n{"expectations": [{"text": "A", "passed": true, "evidence": "e"}]}\n```',
    ],
    ids=["bare", "fenced-after-text", "inline", "fenced-plain"],
)
def test_the_grading_object_is_taken_from_a_reply_bare_or_fenced(reply: str) -> None:
    graded, problem = parse_grading(reply, ["A"])
    assert problem == "" and graded is not None and graded[0].passed


def test_a_reply_without_an_object_says_so() -> None:
    with pytest.raises(ValueError, match="no JSON object in the text"):
        json_object_in("All good, {no json here")
    assert parse_grading("All good!", ["A"]) == (None, "not JSON ('All good!')")
