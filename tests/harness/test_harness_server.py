"""The loopback server keeps connections alive: an openai client given its base_url sends
every request on one TCP connection; the harness's own clients are answered in process, with
none; plain, streamed and chunked requests, unknown routes and stop() behave on a kept-alive
connection."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
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
from pytest_agent_skills.harness.server import shared_server
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


def test_sixty_four_clients_that_connect_at_the_same_moment_are_all_answered() -> None:
    # Eval runs in parallel each open their own connection. With socketserver's backlog of 5,
    # clients beyond it got "Connection error" (here 4 to 28 of 64, in each of 6 tries).
    failures: list[str] = []
    switching = sys.getswitchinterval()
    with LoopbackServer(ScriptedBackend(ScriptedModel([{"say": "ok"}] * 64))) as server:
        barrier = threading.Barrier(64)

        def one() -> None:
            model = OpenAIClientModel.connect(server.base_url, model="m")
            barrier.wait()
            try:
                model.complete({"messages": [{"role": "user", "content": "hi"}]})
            except Exception as error:  # every failure is reported below, with its text
                failures.append(f"{type(error).__name__}: {error}")

        threads = [threading.Thread(target=one) for _ in range(64)]
        sys.setswitchinterval(1e-6)  # the server's accept loop waits its turn, as under load
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(switching)
    assert failures == []
    assert server.requests == 64


@pytest.mark.parametrize("transport", ["sdk", "sdk-stream"])
def test_a_conversation_through_the_sdk_opens_no_connection(transport: str) -> None:
    server = shared_server()
    before = (server.requests, server.connections_opened)
    trajectory = run_conversation(
        SkillRepository([SKILLS]), "Hi.", script=SCRIPT, transport=transport
    ).trajectory
    assert trajectory.final == "Done."
    assert server.requests - before[0] == 4
    assert server.connections_opened == before[1]


LISTENING_AFTER_CONVERSATIONS = """
import sys, threading
from pytest_agent_skills.harness import run_conversation
from pytest_agent_skills.harness.server import shared_server
from pytest_agent_skills.repository import SkillRepository
script = [{"call": "skill_list"}, {"say": "Done."}]
for transport in ("sdk", "sdk-stream"):
    run_conversation(SkillRepository([sys.argv[1]]), "Hi.", script=script, transport=transport)
names = sorted(thread.name for thread in threading.enumerate())
print(shared_server().listening, shared_server().requests, names)
"""


def test_a_process_whose_conversations_are_answered_in_process_never_listens() -> None:
    """No socket, no accepting thread waking every 50 ms: a process of scenarios never asks
    for the shared server's address."""
    done = subprocess.run(
        [sys.executable, "-c", LISTENING_AFTER_CONVERSATIONS, str(SKILLS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.strip() == "False 4 ['MainThread']"


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
            "Line too long",
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
