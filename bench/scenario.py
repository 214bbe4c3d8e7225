"""A 10-turn scenario through the direct path and the SDK path, against their floors.

The scenario (9 tool-call turns, then a final text turn) runs on the fixture skills of
the harness tests: listing, loading, doc and tool selection, a stub tool, and two
``skill_run`` commands whose own time (``duration_ms``) is subtracted, so the figures are
the harness's cost, not the commands'.

Two floors are measured in the same run, round robin with the paths (a busy moment of
the machine hits all alike):

- the *protocol floor*: the same tool calls made straight on a ``SkillSession`` (no
  model, no loop) - what the direct path cannot go below;
- the *SDK floor*: the same ``openai`` client the harness uses (``OpenAIClientModel``,
  ``chat.completions.create``) posting the same 10 request bodies to a minimal
  keep-alive HTTP server that answers each with its canned completion bytes - what the
  SDK path cannot go below, since the client's own request handling is most of it.

    python bench/scenario.py [rounds]

Goal (issue 14): the SDK transport within 1.3x the SDK floor, with one client and one
keep-alive connection per conversation (the connections the SDK path opens are counted).
The SDK path does the protocol's work too, which the SDK floor does not: its transport
cost is the SDK path minus the direct path of the same round.  Printed: that ratio (the
goal's), and the whole SDK path against the SDK floor alone and against direct + floor.
"""

from __future__ import annotations

import json
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_agent_skills.harness import run_conversation
from pytest_agent_skills.harness.models import OpenAIClientModel
from pytest_agent_skills.harness.turns import completion_body, completion_chunks
from pytest_agent_skills.protocol import SkillSession, ToolPool
from pytest_agent_skills.repository import SkillRepository

SKILLS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "harness" / "skills"
TOOLS = {
    "get_current_weather": {"description": "Current weather", "returns": {"temperature": 21}},
    "get_weather_forecast": {"description": "Forecast", "returns": {"days": []}},
}
SCRIPT: list[dict[str, Any]] = [
    {"call": "skill_list"},
    {"call": "skill_load", "args": {"skill_name": "weather-tools"}},
    {"call": "skill_list_docs", "args": {"skill_name": "weather-tools"}},
    {"call": "skill_select_docs", "args": {"skill_name": "weather-tools", "docs": ["docs/API.md"]}},
    {"call": "get_current_weather", "args": {"city": "Paris"}},
    {
        "call": "skill_select_tools",
        "args": {"skill_name": "weather-tools", "tools": ["get_current_weather"]},
    },
    {
        "call": "skill_run",
        "args": {
            "skill": "weather-tools",
            "command": "python3 scripts/report.py Paris > out/r.txt",
        },
    },
    {"call": "skill_load", "args": {"skill_name": "notes", "docs": ["docs/style.md"]}},
    {"call": "skill_run", "args": {"skill": "notes", "command": "bash scripts/count.sh SKILL.md"}},
    {"say": "The report is saved."},
]
GOAL = 1.3


def command_ms(calls: list[Any]) -> float:
    return sum(
        call.result.get("duration_ms", 0)
        for call in calls
        if call.name == "skill_run" and isinstance(call.result, dict)
    )


def through_loop(repository: SkillRepository, transport: str) -> float:
    started = time.perf_counter()
    outcome = run_conversation(
        repository,
        "Weather report for Paris, please.",
        script=SCRIPT,
        transport=transport,
        tools=TOOLS,
        dynamic_tools=True,
    )
    elapsed = (time.perf_counter() - started) * 1000
    assert len(outcome.trajectory.turns) == 10
    return elapsed - command_ms(outcome.trajectory.calls)


def protocol_floor(repository: SkillRepository) -> float:
    """The same tool calls straight on a session: the protocol's own cost."""
    pool = ToolPool()
    for name, spec in TOOLS.items():
        pool.stub(name, spec["description"], {"type": "object", "properties": {}}, spec["returns"])
    started = time.perf_counter()
    with SkillSession(repository, tool_pool=pool, dynamic_tools=True) as session:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
        commands = 0.0
        for turn in SCRIPT:
            session.build_request(messages)
            if "call" in turn:
                outcome = session.call(turn["call"], turn.get("args", {}))
                if turn["call"] == "skill_run":
                    commands += outcome.result["duration_ms"]
    return (time.perf_counter() - started) * 1000 - commands


# --- the SDK floor -----------------------------------------------------------------------------


class MinimalServer:
    """Answers every POST on a kept-alive connection with the next canned response, in order:
    no routing, no JSON parsing, no backend; a thread per connection."""

    def __init__(self, responses: list[bytes]) -> None:
        self.responses = responses
        self.served = 0
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while True:
            connection, _ = self.listener.accept()
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.connections += 1
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        buffer = b""
        with connection:
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, buffer = buffer.split(b"\r\n\r\n", 1)
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(buffer) < length:
                    buffer += connection.recv(65536)
                buffer = buffer[length:]
                connection.sendall(self.responses[self.served % len(self.responses)])
                self.served += 1


def canned(body: dict[str, Any], stream: bool) -> bytes:
    if stream:
        events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in completion_chunks(body))
        payload, kind = (events + "data: [DONE]\n\n").encode(), "text/event-stream"
    else:
        payload, kind = json.dumps(body).encode(), "application/json"
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode()
    return head + payload


def sdk_floor_measure(repository: SkillRepository, stream: bool) -> Callable[[], float]:
    """The harness's openai client posting the scenario's 10 requests to a minimal server."""
    trajectory = run_conversation(
        repository,
        "Weather report for Paris, please.",
        script=SCRIPT,
        tools=TOOLS,
        dynamic_tools=True,
    ).trajectory
    requests = [
        {key: value for key, value in record.body.items() if key != "model"}
        for record in trajectory.requests
    ]
    from pytest_agent_skills.harness.turns import scripted_turn

    responses = [
        canned(completion_body(scripted_turn(turn).to_model_turn(i), "m", f"c-{i}"), stream)
        for i, turn in enumerate(SCRIPT)
    ]
    server = MinimalServer(responses)

    def measure() -> float:
        started = time.perf_counter()
        # One client per conversation, as ServedModel makes one.
        model = OpenAIClientModel.connect(server.base_url, model="m", stream=stream)
        for request in requests:
            model.complete(request)
        return (time.perf_counter() - started) * 1000

    return measure


def count_connections(repository: SkillRepository) -> list[int]:
    """New TCP connections the SDK path opens in each of two conversations."""
    real = socket.socket.connect
    counts: list[int] = []

    def connect(self: socket.socket, address: Any) -> Any:
        counts[-1] += 1
        return real(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    try:
        for _ in range(2):
            counts.append(0)
            through_loop(repository, "sdk")
    finally:
        socket.socket.connect = real  # type: ignore[method-assign]
    return counts


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    repository = SkillRepository([SKILLS])
    measures = {
        "protocol floor": lambda: protocol_floor(repository),
        "direct": lambda: through_loop(repository, "direct"),
        "SDK floor": sdk_floor_measure(repository, stream=False),
        "sdk": lambda: through_loop(repository, "sdk"),
        "SDK floor, streamed": sdk_floor_measure(repository, stream=True),
        "sdk-stream": lambda: through_loop(repository, "sdk-stream"),
    }
    for measure in measures.values():
        measure()  # warm-up: imports, the first connection, caches
    samples: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            samples[name].append(measure())

    def ratio(path: str, floor: str) -> float:
        return statistics.median(
            value / base for value, base in zip(samples[path], samples[floor], strict=True)
        )

    def transport(path: str, floor: str) -> float:
        """(path - direct) / floor, round by round: the SDK path's cost beyond the protocol."""
        rounds_ = zip(samples[path], samples["direct"], samples[floor], strict=True)
        return statistics.median((value - direct) / base for value, direct, base in rounds_)

    def whole(path: str, floor: str) -> float:
        rounds_ = zip(samples[path], samples["direct"], samples[floor], strict=True)
        return statistics.median(value / (direct + base) for value, direct, base in rounds_)

    print(f"10-turn scenario, {rounds} rounds round robin, skill_run command time excluded")
    print(f"  {'path':<22}{'median':>9}{'min':>9}")
    for name, values in samples.items():
        print(f"  {name:<22}{statistics.median(values):7.1f}ms{min(values):7.1f}ms")
    goal = transport("sdk", "SDK floor")
    streamed = transport("sdk-stream", "SDK floor, streamed")
    print("ratios (median of rounds):")
    print(f"  SDK transport (sdk - direct) / SDK floor   x{goal:.2f}   streamed x{streamed:.2f}")
    print(
        f"  whole SDK path / SDK floor                 x{ratio('sdk', 'SDK floor'):.2f}"
        f"   streamed x{ratio('sdk-stream', 'SDK floor, streamed'):.2f}"
    )
    print(
        f"  whole SDK path / (direct + SDK floor)      x{whole('sdk', 'SDK floor'):.2f}"
        f"   streamed x{whole('sdk-stream', 'SDK floor, streamed'):.2f}"
    )
    print(f"  direct / protocol floor                    x{ratio('direct', 'protocol floor'):.2f}")
    print(f"  SDK path / direct                          x{ratio('sdk', 'direct'):.2f}")
    first, second = count_connections(repository)
    print(
        f"TCP connections opened by the SDK path: {first} in a conversation, {second} in the"
        " next (one keep-alive connection, reused)"
    )
    print(
        f"goal SDK transport <= {GOAL}x SDK floor: {'met' if goal <= GOAL else 'NOT met'}"
        f" (x{goal:.2f})"
    )


if __name__ == "__main__":
    main()
