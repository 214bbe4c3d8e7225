"""The harness against a real OpenAI-compatible server (llama.cpp's, serving SmolLM2-135M;
see bench/support/realmodel.py): the request shapes it sends are accepted, tool calls come
back and go back. What is asserted is the pipeline, never what a 135M model answers."""

from __future__ import annotations

from typing import Any

import pytest

from bench.support.realmodel import MODEL_PARAMS, RealModel
from pytest_agent_skills.harness.models import OpenAIClientModel
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall

pytestmark = pytest.mark.realmodel

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "skill_list",
            "description": "List the skills there are.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def _client(server: RealModel) -> OpenAIClientModel:
    return OpenAIClientModel.connect(server.base_url, model=server.model, timeout=120)


def _ask(server: RealModel, messages: list[dict[str, Any]], **fields: Any) -> ModelTurn:
    request = {"messages": messages, "tools": TOOLS, **MODEL_PARAMS, **fields}
    return _client(server).complete(request)


def test_the_server_answers_a_chat_completion(real_model: RealModel) -> None:
    turn = _ask(real_model, [{"role": "user", "content": "Say hello."}], tool_choice="none")
    assert turn.text is not None and turn.origin.startswith(real_model.base_url)


def test_an_assistant_turn_of_tool_calls_goes_back_as_the_server_accepts_it(
    real_model: RealModel,
) -> None:
    forced = {"type": "function", "function": {"name": "skill_list"}}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which skills are there?"}]
    turn = _ask(real_model, messages, tool_choice=forced)
    assert [call.name for call in turn.tool_calls] == ["skill_list"]
    echoed = turn.history_message()
    assert echoed["content"] == ""
    messages += [
        echoed,
        {"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": '{"skills": []}'},
    ]
    answer = _ask(real_model, messages, tool_choice="none")  # HTTP 200: the shape is accepted
    assert answer.tool_calls == ()


@pytest.mark.parametrize(
    ("content", "refusal"),
    [(None, "'messages'"), ("absent", "has no attribute 'content'")],
    ids=["null", "absent"],
)
def test_the_other_shapes_of_content_beside_tool_calls_are_refused_by_this_server(
    real_model: RealModel, content: str | None, refusal: str
) -> None:
    """Why the harness sends ``""``: this server refuses null (its request validation) and an
    absent ``content`` (its chat template), both as HTTP 500."""
    import openai

    echoed = ModelTurn(None, (ToolCall("call_0", "skill_list", "{}"),)).to_message()
    if content == "absent":
        del echoed["content"]
    messages = [
        {"role": "user", "content": "Which skills are there?"},
        echoed,
        {"role": "tool", "tool_call_id": "call_0", "content": "{}"},
    ]
    with pytest.raises(openai.APIStatusError) as refused:
        _client(real_model).client.chat.completions.create(
            model=real_model.model, messages=messages, max_tokens=8
        )
    assert refused.value.status_code == 500
    assert refusal in str(refused.value)
