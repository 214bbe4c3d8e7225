"""A model served in process: the real ``openai`` client answered by the loopback server's
handler in the client's thread, with no connection.  What the backend receives and what the
client reads are those of a model served through a connection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.harness.cassette import CassetteBackend
from pytest_agent_skills.harness.errors import CassetteMissError, HarnessError
from pytest_agent_skills.harness.runner import ServedModel
from pytest_agent_skills.harness.server import LoopbackServer, Reply, shared_server
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall, completion_body

REQUEST = {
    "messages": [
        {"role": "system", "content": "Skills: notes. é \u2028"},
        {"role": "user", "content": "Load it."},
    ],
    "tools": [{"type": "function", "function": {"name": "skill_load", "parameters": {}}}],
}


class Recorder:
    """A backend that keeps what it received and answers a tool call, then a text."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, Any], dict[str, str]]] = []

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.received.append((body, headers))
        if len(self.received) == 1:
            turn = ModelTurn(tool_calls=(ToolCall("call_1", "skill_load", '{"skill_name": "n"}'),))
        else:
            turn = ModelTurn(text="Done.")
        answer = completion_body(turn, str(body.get("model", "")), f"c-{len(self.received)}")
        return Reply(answer, headers={"X-Served": "yes", "Content-Length": "1"})


def converse(in_process: bool, stream: bool) -> tuple[Recorder, list[ModelTurn]]:
    backend = Recorder()
    served = ServedModel(backend, model_name="m", stream=stream, in_process=in_process)
    try:
        turns = [served.complete(REQUEST), served.complete(REQUEST)]
    finally:
        served.close()
    return backend, turns


def _comparable(headers: dict[str, str]) -> dict[str, str]:
    """Request headers by lower-case name, the ones that name the request's own copy left out
    (a retry count, a client's idempotency key), and ``Host``: the server's address, which a
    client answered in process has none of."""
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower() not in ("x-stainless-retry-count", "idempotency-key", "host")
    }


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_in_process_the_backend_and_the_client_see_what_a_connection_carries(
    stream: bool,
) -> None:
    through_connection, turns_connected = converse(in_process=False, stream=stream)
    in_process, turns_in_process = converse(in_process=True, stream=stream)
    assert [body for body, _ in in_process.received] == [
        body for body, _ in through_connection.received
    ]
    assert [_comparable(headers) for _, headers in in_process.received] == [
        _comparable(headers) for _, headers in through_connection.received
    ]
    assert [(turn.text, turn.tool_calls) for turn in turns_in_process] == [
        (turn.text, turn.tool_calls) for turn in turns_connected
    ]
    assert turns_in_process[1].text == "Done."


def test_in_process_no_connection_is_made() -> None:
    server = shared_server()
    before = (server.requests, server.connections_opened)
    converse(in_process=True, stream=False)
    assert server.requests - before[0] == 2
    assert server.connections_opened == before[1]


def test_a_server_answering_in_process_only_never_listens() -> None:
    server = LoopbackServer()
    served = ServedModel(Recorder(), model_name="m", stream=False, server=server)
    try:
        turns = [served.complete(REQUEST), served.complete(REQUEST)]
    finally:
        served.close()
        server.stop()
    assert turns[1].text == "Done."
    assert (server.requests, server.connections_opened, server.listening) == (2, 0, False)


def test_the_socket_is_opened_when_the_address_is_asked() -> None:
    with LoopbackServer() as server:
        assert not server.listening
        served = ServedModel(
            Recorder(), model_name="m", stream=False, in_process=False, server=server
        )
        try:
            assert served.complete(REQUEST).tool_calls[0].name == "skill_load"
        finally:
            served.close()
        assert server.listening
        assert server.connections_opened == 1


def test_a_server_stopped_before_it_listened_has_no_address() -> None:
    server = LoopbackServer()
    server.stop()
    with pytest.raises(HarnessError, match="stopped before it listened: it has no address"):
        _ = server.base_url


def test_in_process_a_backends_failure_is_raised_as_itself(tmp_path: Path) -> None:
    cassette = tmp_path / "empty.json"
    cassette.write_text('{"interactions": []}')
    served = ServedModel(
        CassetteBackend(cassette, mode="none"), model_name="m", stream=False, in_process=True
    )
    try:
        with pytest.raises(CassetteMissError, match="no match in cassette"):
            served.complete(REQUEST)
    finally:
        served.close()


@pytest.mark.parametrize("in_process", [False, True], ids=["connection", "in process"])
def test_an_unmounted_model_fails_alike_in_process_or_not(in_process: bool) -> None:
    served = ServedModel(Recorder(), model_name="m", stream=False, in_process=in_process)
    served.close()  # its route has no backend now
    with pytest.raises(RuntimeError, match="the loopback server has no backend at /m/"):
        served.complete(REQUEST)
