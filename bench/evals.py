"""Skill evals against a slow endpoint: concurrency, harness overhead, offline replay.

An endpoint on a loopback port answers each request after ``DELAY`` (200 ms): an agent that
loads the skill when it is offered and then answers (2 requests), or answers at once without
it (1 request), and a grader (1 request a run).  Measured in one run:

1. *Concurrency*: 2 evals x 2 configurations x 5 runs recorded with ``--jobs 8``; its wall time
   against the ideal, requests x DELAY / 8.  Goal: <= 1.3x.
2. *Harness overhead per request*: the same benchmark with ``--jobs 1`` (every request one
   after the other), its wall time per request, against the raw ``openai`` client posting the
   same request bodies (read from the cassettes) to the same endpoint one after the other (the
   floor, measured round robin with it).  Goal: <= 5 ms a request more than the floor.
3. *Replay*: the recorded 20-run benchmark replayed by ``agent-skills eval`` as a whole
   process, with every connection off loopback refused and counted.  Goal: <= 2 s, and none.
   Printed beside it: a process that only imports the libraries the replay needs, most of
   the time on a busy machine.

    python bench/evals.py [--small]

``--small`` (1 run, a 20 ms endpoint) checks that the script works; its figures mean nothing.
Note the load average beside the figures: the machine's other work slows every path.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_agent_skills.evals.options import EvalOptions, RetryPolicy  # noqa: E402
from pytest_agent_skills.evals.runner import EvalRequest, run_benchmark  # noqa: E402
from pytest_agent_skills.harness import LoopbackServer, Reply, RunSettings, Upstream  # noqa: E402
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall, completion_body  # noqa: E402

SKILL_MD = """---
name: bench-skill
description: Answers bench questions. Use when asked a bench question.
---
Answer "42".
"""
OTHER_MD = """---
name: other-skill
description: Does other things. Use for other things.
---
Other.
"""
EVALS = {
    "skill_name": "bench-skill",
    "evals": [
        {"id": number, "prompt": f"Bench question {number}?", "expectations": ["It says 42"]}
        for number in (1, 2)
    ],
}

GUARD = """
import socket, ipaddress, sys, atexit
blocked = []
real = socket.socket.connect
def connect(self, address):
    host = address[0] if isinstance(address, tuple) else "localhost"
    try:
        loop = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loop = False
    if not loop:
        blocked.append(address)
        raise OSError("blocked off loopback: %r" % (address,))
    return real(self, address)
socket.socket.connect = connect
atexit.register(lambda: print("OFF-LOOPBACK", len(blocked), file=sys.stderr))
from pytest_agent_skills.cli import main
sys.exit(main(sys.argv[1:]))
"""


class SlowEndpoint:
    """Answers every request after ``delay`` seconds (each connection has its thread)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self.lock = threading.Lock()

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        time.sleep(self.delay)
        with self.lock:
            self.requests += 1
        messages = body.get("messages", [])
        if "response_format" in body:
            grading = {"expectations": [{"text": "It says 42", "passed": True, "evidence": "42"}]}
            turn = ModelTurn(text=json.dumps(grading))
        elif "bench-skill:" in (messages[0].get("content") or "") and not any(
            message["role"] == "tool" for message in messages
        ):
            arguments = json.dumps({"skill_name": "bench-skill"})
            turn = ModelTurn(tool_calls=(ToolCall("call_1", "skill_load", arguments),))
        else:
            turn = ModelTurn(text="42")
        answer = completion_body(turn, str(body.get("model", "")), "chatcmpl-bench")
        answer["usage"] = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
        return Reply(answer)


def make_skill(root: Path) -> Path:
    skill = root / "skills" / "bench-skill"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "evals" / "evals.json").write_text(json.dumps(EVALS))
    (root / "skills" / "other-skill").mkdir()
    (root / "skills" / "other-skill" / "SKILL.md").write_text(OTHER_MD)
    return skill


def record(skill: Path, base_url: str, runs: int, jobs: int, cassettes: Path) -> float:
    options = EvalOptions(
        runs=runs,
        jobs=jobs,
        run=RunSettings(
            record_mode="all", upstream=Upstream(base_url, "sk-bench"), model_name="bench-model"
        ),
        cassettes=cassettes,
        base_dir=skill.parent.parent,
        retry=RetryPolicy(attempts=1),
    )
    started = time.perf_counter()
    outcome = run_benchmark(EvalRequest(skill, options))
    elapsed = time.perf_counter() - started
    errors = [run["error"] for run in outcome.document["runs"] if run["error"]]
    if errors:
        raise SystemExit(f"bench runs failed: {errors[0]}")
    return elapsed


def recorded_bodies(cassettes: Path) -> list[dict[str, Any]]:
    """The request bodies the harness sent, as its cassettes recorded them."""
    return [
        interaction["request"]["body"]
        for path in sorted(cassettes.rglob("run-*.json"))
        if not path.name.endswith(".run.json")
        for interaction in json.loads(path.read_text())["interactions"]
    ]


def raw_client(base_url: str, bodies: list[dict[str, Any]]) -> float:
    """The floor: the raw openai client posting the same bodies one after the other."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)
    started = time.perf_counter()
    for body in bodies:
        client.chat.completions.create(**body)
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed


def replay(skill: Path, cassettes: Path, runs: int, out: Path) -> tuple[float, str]:
    command = [
        sys.executable, "-c", GUARD, "eval", str(skill), "--runs", str(runs), "--jobs", "4",
        "--model", "bench-model", "--cassettes", str(cassettes), "--out", str(out), "-q",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=skill.parent.parent,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"replay failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    blocked = done.stderr.rsplit("OFF-LOOPBACK", 1)[-1].strip()
    return elapsed, blocked


def import_floor() -> float:
    """A python process that only imports what the replay must: the openai client (and httpx),
    jsonschema (the eval files' schema) and yaml (the expect: vocabulary)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import openai, jsonschema, yaml"], check=True)
    return time.perf_counter() - started


def main() -> None:
    small = "--small" in sys.argv
    delay = 0.02 if small else 0.2
    runs, rounds = (1, 1) if small else (5, 3)
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores shared)")
    with tempfile.TemporaryDirectory(prefix="bench-evals-") as folder:
        root = Path(folder)
        skill = make_skill(root)
        endpoint = SlowEndpoint(delay)
        with LoopbackServer(endpoint) as server:
            url = server.base_url
            record(skill, url, 1, 2, root / "warm-up")  # imports, the loopback server, a client
            before = endpoint.requests
            concurrent = record(skill, url, runs, 8, root / "cassettes")
            requests = endpoint.requests - before
            ideal = requests * delay / 8
            print(
                f"1. concurrency: {2 * 2 * runs} runs, {requests} requests of {delay * 1000:.0f} ms"
                f" with --jobs 8: {concurrent:.2f} s; ideal {ideal:.2f} s;"
                f" ratio {concurrent / ideal:.2f} (goal <= 1.3)"
            )
            harness, floor = [], []
            for _ in range(rounds):  # round robin: a busy moment hits both alike
                before = endpoint.requests
                harness.append(record(skill, url, runs, 1, root / "sequential"))
                sequential = endpoint.requests - before
                bodies = recorded_bodies(root / "sequential")
                assert len(bodies) == sequential, (len(bodies), sequential)
                floor.append(raw_client(url, bodies))
            per_harness = statistics.median(harness) / sequential * 1000
            per_floor = statistics.median(floor) / sequential * 1000
            print(
                f"2. per request, one after the other ({sequential} requests, median of"
                f" {rounds}): harness {per_harness:.1f} ms, raw openai client {per_floor:.1f} ms;"
                f" overhead {per_harness - per_floor:.1f} ms (goal <= 5)"
            )
        elapsed, blocked = replay(skill, root / "cassettes", runs, root / "out")
        imports = import_floor()
        print(
            f"3. replay of the {2 * 2 * runs}-run benchmark (agent-skills eval, whole process):"
            f" {elapsed:.2f} s (goal <= 2); connections off loopback: {blocked} (goal 0);"
            f" of it, a process importing openai, jsonschema and yaml alone: {imports:.2f} s"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
