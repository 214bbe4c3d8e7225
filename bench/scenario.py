"""A 10-turn scenario through the direct path and the SDK path, and their ratio.

The scenario (9 tool-call turns, then a final text turn) runs on the fixture skills of
the harness tests: listing, loading, doc and tool selection, a stub tool, and two
``skill_run`` commands whose own time (``duration_ms``) is subtracted, so the figures are
the harness's cost, not the commands'.  The floor is the same tool calls made straight on
a ``SkillSession`` (no model, no loop), measured in the same run.

    python bench/scenario.py [repetitions]

Goal: direct <= 50 ms, SDK <= 3x direct.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pytest_agent_skills.harness import run_conversation
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


def floor(repository: SkillRepository) -> float:
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


def request_breakdown(repository: SkillRepository, repetitions: int) -> dict[str, float]:
    """Where one SDK request's time goes, on the last (largest) request of the scenario."""
    import httpx2
    from openai.types.chat import ChatCompletion

    from pytest_agent_skills.harness import ModelTurn, OpenAIClientModel, Reply
    from pytest_agent_skills.harness.server import shared_server
    from pytest_agent_skills.harness.turns import completion_body

    class Answer:
        def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
            return Reply(completion_body(ModelTurn("ok"), "m", "chatcmpl-1"))

    body = (
        run_conversation(repository, "Weather?", script=SCRIPT, tools=TOOLS, dynamic_tools=True)
        .trajectory.requests[-1]
        .body
    )
    server = shared_server()
    key = server.mount(Answer())
    url = server.origin + key + "/v1"
    model = OpenAIClientModel.connect(url, model="m")
    request = {k: v for k, v in body.items() if k != "model"}
    raw = httpx2.Client()
    ways = {
        "openai chat.completions.create": lambda: model.complete(request),
        "openai client.post (no param transform)": lambda: model.client.post(
            "/chat/completions", body=body, cast_to=ChatCompletion
        ),
        "raw HTTP (httpx) + json": lambda: raw.post(url + "/chat/completions", json=body).json(),
    }
    timings = {}
    for name, call in ways.items():
        call()
        samples = []
        for _ in range(repetitions):
            started = time.perf_counter()
            call()
            samples.append((time.perf_counter() - started) * 1000)
        timings[name] = statistics.median(samples)
    server.unmount(key)
    timings["request body bytes"] = len(json.dumps(body))
    return timings


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    repository = SkillRepository([SKILLS])
    measures = {
        "floor": lambda: floor(repository),
        "direct": lambda: through_loop(repository, "direct"),
        "sdk": lambda: through_loop(repository, "sdk"),
        "sdk-stream": lambda: through_loop(repository, "sdk-stream"),
    }
    for measure in measures.values():
        measure()  # warm-up: imports, the first connection, caches
    # Round robin, so that a busy moment of the machine hits every path alike.
    samples: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(repetitions):
        for name, measure in measures.items():
            samples[name].append(measure())
    ratio = {
        name: statistics.median(
            v / d for v, d in zip(samples[name], samples["direct"], strict=True)
        )
        for name in measures
    }
    print(f"10-turn scenario, {repetitions} rounds, command time (duration_ms) excluded")
    print(f"  {'path':<11}{'median':>9}{'min':>9}   ratio to direct (median of rounds)")
    for name, values in samples.items():
        print(
            f"  {name:<11}{statistics.median(values):7.1f}ms{min(values):7.1f}ms"
            f"   x{ratio[name]:.2f}"
        )
    overhead = statistics.median(
        d - f for d, f in zip(samples["direct"], samples["floor"], strict=True)
    )
    print(f"  the loop's own cost (direct - floor, median of rounds): {overhead:.1f} ms")
    print("one SDK request, median:")
    for name, value in request_breakdown(repository, repetitions * 2).items():
        print(f"  {name:<42}{value:8.1f}" + ("" if "bytes" in name else " ms"))
    direct = statistics.median(samples["direct"])
    print(f"goal direct <= 50 ms: {'met' if direct <= 50 else 'NOT met'} ({direct:.1f} ms)")
    print(
        f"goal SDK <= 3x direct: {'met' if ratio['sdk'] <= 3 else 'NOT met'}"
        f" (x{ratio['sdk']:.2f}; streaming x{ratio['sdk-stream']:.2f})"
    )


if __name__ == "__main__":
    main()
