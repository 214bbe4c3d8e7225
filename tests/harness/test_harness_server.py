"""The loopback server keeps connections alive: a conversation through the openai client
uses one TCP connection (what keeps the SDK path fast); plain, streamed and chunked requests,
unknown routes and stop() behave on a kept-alive connection."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agent_skills.harness import (
    LoopbackServer,
    OpenAIClientModel,
    ScriptedBackend,
    ScriptedModel,
    run_conversation,
)
from pytest_agent_skills.harness.server import (
    Reply,
    answered_fields,
    request_json,
    shared_server,
)
from pytest_agent_skills.harness.turns import completion_chunks, completion_events
from pytest_agent_skills.repository import SkillRepository
from tests.support.harness import SKILLS

SCRIPT = [
    {"call": "skill_list"},
    {"call": "skill_load", "args": {"skill_name": "notes"}},
    {"call": "skill_list_docs", "args": {"skill_name": "notes"}},
    {"say": "Done."},
]


def test_the_openai_client_sends_every_request_on_one_connection() -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "ok"}] * 5))) as server:
        model = OpenAIClientModel.connect(server.base_url, model="m")
        texts = [
            model.complete({"messages": [{"role": "user", "content": "hi"}]}).text for _ in range(5)
        ]
    assert texts == ["ok"] * 5
    assert (server.requests, server.connections_opened) == (5, 1)


@pytest.mark.parametrize("transport", ["sdk", "sdk-stream"])
def test_a_conversation_through_the_sdk_opens_at_most_one_connection(transport: str) -> None:
    """Streamed too: the client's event stream stops reading at ``data: [DONE]``, before the
    end of the message, which closed each response's connection until the harness read the
    events whole."""
    server = shared_server()
    before = (server.requests, server.connections_opened)
    trajectory = run_conversation(
        SkillRepository([SKILLS]), "Hi.", script=SCRIPT, transport=transport
    ).trajectory
    assert trajectory.final == "Done."
    assert server.requests - before[0] == 4
    assert server.connections_opened - before[1] <= 1  # none once the pool holds one


def test_a_chunked_request_body_is_read_whole() -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "chunked ok"}]))) as server:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]})
        parts = (body[i : i + 1000].encode() for i in range(0, len(body), 1000))
        with httpx.Client() as client:
            response = client.post(server.base_url + "/chat/completions", content=parts)
    assert response.json()["choices"][0]["message"]["content"] == "chunked ok"


def test_an_unknown_route_is_a_404_and_the_connection_stays_usable() -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "after"}]))) as server:
        with httpx.Client() as client:
            missing = client.get(server.origin + "/v1/models")
            answer = client.post(server.base_url + "/chat/completions", json={"messages": []})
        assert missing.status_code == 404
        assert missing.json() == {"error": {"message": "no route GET /v1/models"}}
        assert answer.json()["choices"][0]["message"]["content"] == "after"
        assert server.connections_opened == 1


def test_stop_closes_the_connections_kept_alive() -> None:
    server = LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "one"}])))
    host, port = server.origin.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        body = b'{"messages": []}'
        connection.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += connection.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"connection: close" not in reply.lower()
        server.stop()
        connection.settimeout(5)
        rest = reply
        while chunk := connection.recv(65536):
            rest += chunk
        assert connection.recv(1) == b""  # the server closed it


def exchange(server: LoopbackServer, request: bytes) -> bytes:
    """Send raw bytes and read until the server closes the connection."""
    host, port = server.origin.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(request)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return reply


def head_and_body(reply: bytes) -> tuple[list[str], bytes]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return head.decode("latin-1").split("\r\n"), body


def test_an_answer_is_one_piece_with_its_length_and_a_date() -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "one"}]))) as server:
        body = b'{"messages": []}'
        reply = exchange(
            server,
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
        )
    lines, payload = head_and_body(reply)
    assert lines[0] == "HTTP/1.1 200 OK"
    assert f"Content-Length: {len(payload)}" in lines
    assert "Connection: close" in lines
    assert any(line.startswith("Date: ") and line.endswith(" GMT") for line in lines)
    assert json.loads(payload)["choices"][0]["message"]["content"] == "one"


def test_an_http_1_0_client_and_an_expect_100_continue_are_answered() -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "a"}, {"say": "b"}]))) as server:
        body = b'{"messages": []}'
        old = exchange(
            server,
            b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body),
        )
        waiting = exchange(
            server,
            b"POST /v1/chat/completions HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close"
            b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body),
        )
    assert head_and_body(old)[0][0] == "HTTP/1.1 200 OK"  # and closed: exchange() returned
    assert waiting.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")


@pytest.mark.parametrize(
    ("request_bytes", "status", "message"),
    [
        (b"POST /v1/chat/completions\r\n\r\n", "400 Bad Request", "bad request line"),
        (b"GET / HTTP/2.0\r\n\r\n", "400 Bad Request", "bad request line 'GET / HTTP/2.0'"),
        (b"POST / HTTP/1.1\r\nNo colon\r\n\r\n", "400 Bad Request", "bad header line 'No colon'"),
        (
            b"POST / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            "400 Bad Request",
            "bad header line ' folded'",
        ),
        (b"POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n", "400 Bad Request", "bad Content-Length"),
        (
            "POST / HTTP/1.1\r\nContent-Length: \u00b2\r\n\r\n".encode("latin-1"),
            "400 Bad Request",
            "bad Content-Length '\u00b2'",
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            "501 Not Implemented",
            "unsupported Transfer-Encoding 'gzip'",
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "400 Bad Request",
            "bad chunk size b'zz'",
        ),
        *(
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\nx\r\n",
                "400 Bad Request",
                f"bad chunk size {size!r}",
            )
            for size in (b"-1", b"0x1", b"+1", b"0_1")
        ),
        (
            b"POST / HTTP/1.1\r\nX: " + b"y" * 70000 + b"\r\n\r\n",
            "431 Request Header Fields Too Large",
            "request head over 65536 bytes",
        ),
    ],
)
def test_a_request_that_cannot_be_read_is_refused_and_the_connection_closed(
    request_bytes: bytes, status: str, message: str
) -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "never"}]))) as server:
        lines, payload = head_and_body(exchange(server, request_bytes))
        assert server.requests == 0
    assert lines[0] == f"HTTP/1.1 {status}"
    assert "Connection: close" in lines
    assert json.loads(payload)["error"]["message"].startswith(message)


# --- request bodies: read as json.loads reads them ---------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()  # NaN and infinities too: json.dumps writes them, json.loads reads them
    | st.text(st.characters(exclude_categories=())),  # lone surrogates too
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


def outcome(read: Callable[[bytes], Any], data: bytes) -> Any:
    """What ``read`` makes of ``data``: its value (by repr: NaN is never equal), or its error."""
    try:
        return repr(read(data))
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError included
        return type(error), str(error)


@settings(max_examples=400, deadline=None, database=None)
@given(JSON_VALUES, st.booleans())
def test_a_request_body_is_read_as_json_loads_reads_it(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")

    assert outcome(request_json, data) == outcome(lambda raw: json.loads(raw.decode()), data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": 1, "a": 2}',  # the last one wins
        b'{"x": "\\ud800", "y": "\\udc00\\ud800"}',  # lone surrogates, which jiter refuses
        b'{"x": 1e400, "y": -0.0, "z": 123456789012345678901234567890}',
        b'{"x": "\xff"}',  # not UTF-8
        b'{"x": "a\nb"}',  # a raw control character
        b'{"x": 1} x',
        b'\xef\xbb\xbf{"x": 1}',
        b'{"x": 01}',
        b"[1,]",
        b" ",
    ],
)
def test_edge_cases_of_request_bodies_are_read_as_json_loads_reads_them(data: bytes) -> None:
    assert outcome(request_json, data) == outcome(lambda raw: json.loads(raw.decode()), data)


def test_an_empty_request_body_is_an_empty_object() -> None:
    assert request_json(b"") == {}


# --- a list script's requests: only the fields the server answers from are built ---------------


def picked(raw: bytes) -> Any:
    """``model`` and ``stream`` of what ``json.loads`` reads (anything but an object whole)."""
    value = json.loads(raw.decode())
    if not isinstance(value, dict):
        return value
    return {name: value[name] for name in ("model", "stream") if name in value}


@settings(max_examples=300, deadline=None, database=None)
@given(
    JSON_VALUES
    | st.dictionaries(st.sampled_from(["model", "stream", "messages"]) | st.text(), JSON_VALUES),
    st.booleans(),
)
def test_the_answered_fields_are_read_as_json_loads_reads_them(
    value: Any, ascii_only: bool
) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")

    assert outcome(answered_fields, data) == outcome(picked, data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"model": "a", "model": "b", "stream": true, "stream": false}',
        b'{"model": "\\ud800", "stream": 1}',  # a lone surrogate: read whole by json.loads
        b'{"\\u0073tream": true, "model": 1e400}',
        b'{"x": "\xff"}',
        b'{"x": "a\nb"}',
        b'{"x": 1} x',
        b'\xef\xbb\xbf{"x": 1}',
        b'[{"model": "m"}]',
        b'"stream"',
        b" ",
    ],
)
def test_edge_cases_of_the_answered_fields_are_read_as_json_loads_reads_them(
    data: bytes,
) -> None:
    assert outcome(answered_fields, data) == outcome(picked, data)


class SeeingBackend(ScriptedBackend):
    def __init__(self, model: ScriptedModel) -> None:
        super().__init__(model)
        self.seen: list[dict[str, Any]] = []

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.seen.append(body)
        return super().respond(body, headers)


def test_a_list_script_is_answered_from_the_model_and_stream_fields_only() -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    listed = SeeingBackend(ScriptedModel([{"say": "listed"}]))
    called = SeeingBackend(ScriptedModel(lambda request, turn: {"say": "called"}))
    with LoopbackServer(listed) as server, httpx.Client() as client:
        key = server.mount(called)
        streamed = client.post(server.base_url + "/chat/completions", json=request)
        client.post(f"{server.origin}{key}/v1/chat/completions", json=request)
    assert streamed.headers["content-type"] == "text/event-stream"
    assert '"model": "m"' in streamed.text and '"content": "listed"' in streamed.text
    assert (listed.reads_request, called.reads_request) == (False, True)
    assert listed.seen == [{"model": "m", "stream": True}]
    assert called.seen == [request]


def test_a_list_script_still_refuses_a_body_json_loads_refuses() -> None:
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "never"}]))) as server:
        with httpx.Client() as client:
            answer = client.post(server.base_url + "/chat/completions", content=b'{"model": }')
        assert answer.status_code == 500
        assert answer.json()["error"]["type"] == "JSONDecodeError"
        with pytest.raises(json.JSONDecodeError, match="Expecting value: line 1 column 11"):
            server.raise_error()


# --- streamed answers: the chunks as json.dumps writes them -------------------------------------

TEXT = st.text(st.characters(exclude_categories=()))
FUNCTION = st.fixed_dictionaries({"name": TEXT, "arguments": TEXT})
TOOL_CALLS = st.lists(
    st.fixed_dictionaries({"id": TEXT, "type": st.just("function"), "function": FUNCTION}),
    max_size=3,
)


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.fixed_dictionaries(
        {
            "id": TEXT,
            "object": st.just("chat.completion"),
            "created": st.integers(min_value=0, max_value=2**40),
            "model": TEXT,
            "choices": st.tuples(
                st.fixed_dictionaries(
                    {
                        "index": st.just(0),
                        "message": st.fixed_dictionaries(
                            {"role": st.just("assistant"), "content": st.none() | TEXT},
                            optional={"tool_calls": TOOL_CALLS},
                        ),
                        "finish_reason": st.none() | TEXT,
                    }
                )
            ).map(list),
        }
    )
)
def test_streamed_events_are_the_chunks_as_json_dumps_writes_them(body: dict[str, Any]) -> None:
    events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in completion_chunks(body))

    assert completion_events(body) == (events + "data: [DONE]\n\n").encode()
