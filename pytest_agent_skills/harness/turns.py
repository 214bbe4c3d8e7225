"""One model turn, and its translation to and from chat-completions JSON.

A :class:`ModelTurn` is what a model says on one turn: optional text and zero
or more tool calls.  Every model behind the seam (scripted, the loopback
server, a cassette, a real endpoint) produces one, so the agent loop never
sees which model it talks to.  The conversions here are the only place that
knows the wire shape of ``chat.completions`` responses, streamed or not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..docpath import kind_of

SCRIPTED_MODEL_NAME = "scripted"
#: A script given as a callable: ``(request, index) -> turn`` (None: no answer).
ScriptFunction = Callable[[dict[str, Any], int], Any]
#: Model turns a conversation may take before the loop calls it runaway.
DEFAULT_MAX_TURNS = 50
#: Fixed so that the same script gives the same bytes on every run.
_CREATED = 1_700_000_000


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the model emits it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def to_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class ModelTurn:
    """What the model answered on one turn."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    #: Where the turn came from (``script.yaml:12``, ``cassette.json#3``), for messages.
    origin: str = ""
    finish_reason: str = field(default="")

    @property
    def is_final(self) -> bool:
        return not self.tool_calls

    def to_message(self) -> dict[str, Any]:
        """The assistant message as a completion answers it (``content`` null when there is
        no text)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message

    def history_message(self) -> dict[str, Any]:
        """The assistant message that goes back into the conversation: ``content`` is text,
        ``""`` when the model said none.  OpenAI's schema makes ``content`` optional beside
        ``tool_calls`` and takes an empty string; llama.cpp's server refuses both null and an
        absent ``content``, so ``""`` is the form every endpoint accepts."""
        message = self.to_message()
        if message["content"] is None:
            message["content"] = ""
        return message


def completion_problem(body: Any) -> str | None:
    """What makes ``body`` unreadable as a ``chat.completion`` (``"no choices"``), or None.

    Checked wherever a completion comes from outside (an endpoint, a cassette), so that a
    malformed one is an error naming its source, never a ``KeyError`` in the loop.
    """
    if not isinstance(body, dict):
        return f"{kind_of(body)} instead of a JSON object"
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        return "no choices"
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        return "a first choice without a 'message' object"
    if not isinstance(message.get("content"), (str, type(None))):
        return "a message whose 'content' is neither text nor null"
    calls = message.get("tool_calls")
    if calls is None:
        return None
    if not isinstance(calls, list):
        return "a message whose 'tool_calls' is not a list"
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return f"tool call #{index} without a function name"
    return None


def turn_from_message(message: dict[str, Any], origin: str = "") -> ModelTurn:
    """A turn from an assistant ``message`` object of a completion response."""
    calls = tuple(
        ToolCall(
            str(call.get("id") or f"call_{index}"),
            str(call["function"]["name"]),
            _arguments_text(call["function"].get("arguments")),
        )
        for index, call in enumerate(message.get("tool_calls") or ())
    )
    return ModelTurn(message.get("content"), calls, origin)


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return _ARGUMENTS_JSON.encode(arguments)


#: ``json.dumps(value, ensure_ascii=False)`` without building an encoder for every call.
_ARGUMENTS_JSON = json.JSONEncoder(ensure_ascii=False)


def completion_body(turn: ModelTurn, model: str, completion_id: str) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` response body for ``turn``."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": turn.to_message(),
                "logprobs": None,
                "finish_reason": "tool_calls" if turn.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def completion_chunks(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects that stream the same answer as ``body``."""
    choice = body["choices"][0]
    message = choice["message"]
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": body["created"],
        "model": body["model"],
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }

    yield chunk(
        {"role": "assistant", "content": "" if message.get("content") is not None else None}
    )
    if message.get("content"):
        yield chunk({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or ()):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        yield chunk(
            {
                "tool_calls": [
                    {"index": index, "function": {"arguments": call["function"]["arguments"]}}
                ]
            }
        )
    yield chunk({}, choice.get("finish_reason") or "stop")


def completion_events(body: dict[str, Any]) -> bytes:
    """The server-sent events that stream ``body``: each of :func:`completion_chunks` as
    ``json.dumps`` writes it, then ``data: [DONE]``."""
    events = "".join(f"data: {_JSON(chunk)}\n\n" for chunk in completion_chunks(body))
    return (events + "data: [DONE]\n\n").encode()


#: ``json.dumps`` with its defaults, without its keyword checks on every call.
_JSON = json.JSONEncoder().encode


def body_from_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Fold streamed chunks back into one ``chat.completion`` body."""
    content: list[str] = []
    saw_content = False
    calls: dict[int, dict[str, Any]] = {}
    finish_reason = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content") is not None:
                saw_content = True
                content.append(delta["content"])
            for part in delta.get("tool_calls") or ():
                call = calls.setdefault(
                    part.get("index", 0),
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = part.get("id") or call["id"]
                function = part.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
            finish_reason = choice.get("finish_reason") or finish_reason
    first = chunks[0] if chunks else {}
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) if saw_content else None,
    }
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {
        "id": first.get("id", ""),
        "object": "chat.completion",
        "created": first.get("created", _CREATED),
        "model": first.get("model", ""),
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
    }


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call written in a script: ``args`` is a mapping, or raw text to test bad JSON."""

    name: str
    args: Any = field(default_factory=dict)

    def arguments_text(self) -> str:
        return self.args if isinstance(self.args, str) else _ARGUMENTS_JSON.encode(self.args)


@dataclass(frozen=True)
class ScriptedTurn:
    """One entry of ``model.script``: tool calls, text, or both."""

    calls: tuple[ScriptedCall, ...] = ()
    say: str | None = None
    #: ``file:line`` of the entry when it comes from a scenario file.
    origin: str = ""

    def to_model_turn(self, turn_index: int) -> ModelTurn:
        calls = tuple(
            ToolCall(f"call_{turn_index}_{index}", call.name, call.arguments_text())
            for index, call in enumerate(self.calls)
        )
        return ModelTurn(self.say, calls, self.origin)

    def describe(self) -> str:
        parts = [f"call {call.name}({call.arguments_text()})" for call in self.calls]
        if self.say is not None:
            parts.append(f"say {self.say!r}")
        where = f" ({self.origin})" if self.origin else ""
        return "; ".join(parts) + where


def scripted_turn(entry: Any, origin: str = "") -> ScriptedTurn:
    """A :class:`ScriptedTurn` from the YAML/dict form: ``{call, args}``, ``{calls}``, ``{say}``.

    The scenario loader has already checked the shape against the schema;
    Python callers get a ``TypeError`` naming the entry when it is wrong.
    """
    if isinstance(entry, ScriptedTurn):
        return entry
    if isinstance(entry, str):
        return ScriptedTurn(say=entry, origin=origin)
    if not isinstance(entry, dict) or not {"call", "calls", "say"} & set(entry):
        raise TypeError(
            f"a script turn is {{call, args}}, {{calls: [...]}} or {{say: text}}, got {entry!r}"
        )
    calls: list[ScriptedCall] = []
    if "call" in entry:
        calls.append(ScriptedCall(entry["call"], entry.get("args", {})))
    for call in entry.get("calls") or ():
        calls.append(ScriptedCall(call["call"], call.get("args", {})))
    return ScriptedTurn(tuple(calls), entry.get("say"), origin)
