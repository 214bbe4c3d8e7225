"""The loopback server keeps connections alive: a conversation through the openai client
uses one TCP connection (issue 14's SDK speed); plain, streamed and chunked requests, unknown
routes and stop() behave on a kept-alive connection."""

from __future__ import annotations

import json
import socket

import httpx
from harness_support import SKILLS

from pytest_agent_skills.harness import (
    LoopbackServer,
    OpenAIClientModel,
    ScriptedBackend,
    ScriptedModel,
    run_conversation,
)
from pytest_agent_skills.harness.server import shared_server
from pytest_agent_skills.repository import SkillRepository

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


def test_a_conversation_through_the_sdk_opens_at_most_one_connection() -> None:
    """(Streamed, the openai client closes each response's connection: it stops reading at
    ``data: [DONE]``, before the end of the message; the bench's floor pays the same.)"""
    server = shared_server()
    before = (server.requests, server.connections_opened)
    trajectory = run_conversation(
        SkillRepository([SKILLS]), "Hi.", script=SCRIPT, transport="sdk"
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
