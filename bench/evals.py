"""Skill evals against a slow endpoint: concurrency, harness overhead, offline replay.

An endpoint on a loopback port answers each request after ``DELAY`` (200 ms): an agent that
loads the skill when it is offered and then answers (2 requests), or answers at once without
it (1 request), and a grader (1 request a run).  Measured in one run:

1. *Concurrency*: 2 evals x 2 configurations x 5 runs recorded with ``--jobs 8``; its wall time
   (median of 3) against the ideal, requests x DELAY / 8.  Goal: <= 1.3x.  Printed beside it:
   the lower bound for these runs (a run is a chain of requests, never split between
   workers: the shortest schedule of the runs' request counts on 8 workers, x DELAY), and the
   raw ``openai`` client posting each run's request bodies (read from its cassettes) in turn,
   8 runs at once, round robin with the harness: what the client and the endpoint cost in one
   process, without the harness.
2. *Harness overhead per request*: the same benchmark with ``--jobs 1`` (every request one
   after the other), its wall time per request, against the raw ``openai`` client posting the
   same request bodies (read from the cassettes) to the same endpoint one after the other (the
   floor, measured round robin with it).  Goal: <= 5 ms a request more than the floor.
3. *Replay*: the recorded 20-run benchmark replayed by ``agent-skills eval`` as a whole
   process, with every connection off loopback refused and counted.  Goal: <= 2 s, and none.
   Printed beside it: a process that only imports the libraries the replay needs, most of
   the time on a busy machine.
4. *The sandbox's cost*: runs whose agent, once it loads the skill, runs one command
   (``skill_run echo 42``) before it answers, on an endpoint that answers at once, ``--jobs
   1``: the wall time per run with the commands in the sandbox (the default runtime) and on
   the local runtime, round robin in the same run, and the sandbox's extra cost per command.

Parts 1-3 use the default runtime (the sandbox where bubblewrap works); their runs run no
command, so it is opened once per benchmark and never used.
5. *A real model*: against llama.cpp's server serving SmolLM2-135M (the test suite's,
   bench/support/realmodel.py), with temperature 0, a seed and a reply cap so that the answers
   repeat, the harness's wall time per request recording an eval one request after the
   other, over the raw ``openai`` client posting the same bodies right after it (round robin,
   median of 3).  Goal: <= 1.05x.  Skipped, saying why, where the server cannot start.

    python bench/evals.py [--small] [--real-only]

``--small`` (1 run, a 20 ms endpoint, one round against the real model) checks that the
script works; its figures mean nothing.  ``--real-only`` measures the fifth figure alone.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_agent_skills.evals.setup.eval_options import EvalOptions, RetryPolicy  # noqa: E402
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark  # noqa: E402
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


#: The agent's final answer, which the grader quotes (a pass counts only with a quote found).
ANSWER = "The answer is 42"


class SlowEndpoint:
    """Answers every request after ``delay`` seconds (each connection has its thread)."""

    def __init__(self, delay: float, command: str = "") -> None:
        self.delay = delay
        #: Run by the agent with skill_run once it loaded the skill ("": it answers at once).
        self.command = command
        self.requests = 0
        self.lock = threading.Lock()

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        time.sleep(self.delay)
        with self.lock:
            self.requests += 1
        messages = body.get("messages", [])
        if "response_format" in body:
            said = {"text": "It says 42", "passed": True, "evidence": "42", "quotes": [ANSWER]}
            grading = {"expectations": [said]}
            turn = ModelTurn(text=json.dumps(grading))
        elif "bench-skill:" in (messages[0].get("content") or "") and not any(
            message["role"] == "tool" for message in messages
        ):
            arguments = json.dumps({"skill_name": "bench-skill"})
            turn = ModelTurn(tool_calls=(ToolCall("call_1", "skill_load", arguments),))
        elif self.command and sum(message["role"] == "tool" for message in messages) == 1:
            arguments = json.dumps({"skill": "bench-skill", "command": self.command})
            turn = ModelTurn(tool_calls=(ToolCall("call_2", "skill_run", arguments),))
        else:
            turn = ModelTurn(text=ANSWER)
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


def record(
    skill: Path,
    base_url: str,
    runs: int,
    jobs: int,
    cassettes: Path,
    runtime: str | None = None,
    model: RealModelSpec | None = None,
    only: tuple[int, ...] = (),
) -> float:
    """The wall time of recording the benchmark; with ``model``, from a real model, whose
    grading errors (a small model's answers) are not the bench's failures."""
    options = EvalOptions(
        runtime=runtime,
        runs=runs,
        jobs=jobs,
        run=RunSettings(
            record_mode="all",
            upstream=Upstream(base_url, "sk-bench"),
            model_name=model.name if model else "bench-model",
            model_params=model.params if model else {},
        ),
        grader_params=model.grader_params if model else {},
        cassettes=cassettes,
        base_dir=skill.parent.parent,
        retry=RetryPolicy(attempts=1),
    )
    started = time.perf_counter()
    outcome = run_benchmark(EvalRequest(skill, options, only=only))
    elapsed = time.perf_counter() - started
    errors = [
        run.error.model_dump()
        for run in outcome.document.runs
        if run.error and not (model and run.error.kind == "grading")
    ]
    if errors:
        raise SystemExit(f"bench runs failed: {errors[0]}")
    return elapsed


@dataclass(frozen=True)
class RealModelSpec:
    """A real model server's model name and the request fields that make its answers repeat."""

    name: str
    params: dict[str, Any]
    grader_params: dict[str, Any]


def recorded_bodies(cassettes: Path) -> list[dict[str, Any]]:
    """The request bodies the harness sent, as its cassettes recorded them."""
    return [body for run in recorded_runs(cassettes) for body in run]


def recorded_runs(cassettes: Path) -> list[list[dict[str, Any]]]:
    """Each run's request bodies in the order it sent them: its conversation's, its grading's."""
    runs = []
    for path in sorted(cassettes.rglob("run-*.json")):
        if path.name.endswith((".run.json", ".grader.json")):
            continue
        grading = path.with_name(path.name.removesuffix(".json") + ".grader.json")
        runs.append(
            [
                interaction["request"]["body"]
                for cassette in (path, grading)
                for interaction in json.loads(cassette.read_text())["interactions"]
            ]
        )
    return runs


def raw_client(base_url: str, bodies: list[dict[str, Any]]) -> float:
    """The floor: the raw openai client posting the same bodies one after the other."""
    return raw_runs(base_url, [bodies], 1)


def raw_answers(base_url: str, bodies: list[dict[str, Any]]) -> tuple[float, list[Any]]:
    """The raw openai client posting ``bodies`` one after the other: the wall time and each
    answer's message (to check that the answers repeat the recorded ones)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-bench", max_retries=0, timeout=300)
    messages = []
    started = time.perf_counter()
    for body in bodies:
        messages.append(client.chat.completions.create(**body).choices[0].message)
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed, messages


def recorded_answers(cassettes: Path) -> list[dict[str, Any]]:
    """The answers' messages, in the order of :func:`recorded_bodies`."""
    return [
        interaction["response"]["body"]["choices"][0]["message"]
        for path in sorted(cassettes.rglob("run-*.json"))
        if not path.name.endswith((".run.json", ".grader.json"))
        for cassette in (path, path.with_name(path.name.removesuffix(".json") + ".grader.json"))
        for interaction in json.loads(cassette.read_text())["interactions"]
    ]


def real_model_figure(small: bool) -> str:
    """4. Against a real model server (llama.cpp's, SmolLM2-135M; bench/support/realmodel.py),
    temperature 0, a seed and a reply cap so that the answers repeat: the harness recording
    an eval one request after the other, its wall time per request over the raw ``openai``
    client posting the same bodies right after (round robin). Goal: <= 1.05x."""
    from bench.support.realmodel import MODEL_PARAMS, start_server, stop_server, unavailable

    reason = unavailable()
    if reason is not None:
        return f"5. real model: skipped ({reason})"
    runs, rounds = (1, 1) if small else (1, 3)
    with tempfile.TemporaryDirectory(prefix="bench-evals-real-") as folder:
        root = Path(folder)
        started = time.perf_counter()
        server = start_server(root / "server.log")
        start_seconds = time.perf_counter() - started
        try:
            skill = make_skill(root)
            cap = 16 if small else 48
            # No tools chosen: a 135M model offered them calls them turn after turn, and
            # the figure is the time per request.
            spec = RealModelSpec(
                server.model,
                {**MODEL_PARAMS, "max_tokens": cap, "tool_choice": "none"},
                {"temperature": 0, "seed": 7, "max_tokens": 4 * cap},
            )
            ratios, harness, floor, repeated, requests = [], [], [], 0, 0
            for number in range(rounds):
                cassettes = root / f"real-{number}"
                elapsed = record(
                    skill, server.base_url, runs, 1, cassettes, "local", spec, only=(1,)
                )
                bodies = recorded_bodies(cassettes)
                raw, answers = raw_answers(server.base_url, bodies)
                recorded = recorded_answers(cassettes)
                repeated += sum(
                    (answer.content or "") == (again.get("content") or "")
                    for answer, again in zip(answers, recorded, strict=True)
                )
                requests += len(bodies)
                harness.append(elapsed / len(bodies))
                floor.append(raw / len(bodies))
                ratios.append(elapsed / raw)
        finally:
            stop_server(server)
    ratio = statistics.median(ratios)
    return (
        f"5. real model (llama.cpp server, {server.model}, temperature 0, seed, max_tokens"
        f" {cap}; started in {start_seconds:.1f} s): {requests // rounds} requests one after the"
        f" other, median of {rounds}: harness {statistics.median(harness) * 1000:.0f} ms a"
        f" request, raw openai client {statistics.median(floor) * 1000:.0f} ms; ratio"
        f" {ratio:.3f} (goal <= 1.05; rounds {', '.join(f'{r:.3f}' for r in ratios)});"
        f" answers repeated {repeated} of {requests}"
    )


def raw_runs(base_url: str, runs: list[list[dict[str, Any]]], jobs: int) -> float:
    """The raw openai client (one, shared) posting each run's bodies in turn, ``jobs`` runs at
    once: the wall time."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)
    waiting = list(reversed(runs))

    def worker() -> None:
        while waiting:
            try:
                bodies = waiting.pop()
            except IndexError:
                return
            for body in bodies:
                client.chat.completions.create(**body)

    threads = [threading.Thread(target=worker) for _ in range(min(jobs, len(runs)))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    client.close()
    return elapsed


def shortest_schedule(lengths: list[int], workers: int) -> int:
    """The fewest requests the busiest worker makes when runs of ``lengths`` requests each
    (never split) are shared among ``workers``: the smallest capacity they pack into."""
    items = sorted(lengths, reverse=True)
    capacity = max(items[0], -(-sum(items) // workers))
    while not _packs(items, [0] * workers, capacity):
        capacity += 1
    return capacity


def _packs(items: list[int], loads: list[int], capacity: int) -> bool:
    if not items:
        return True
    first, rest = items[0], items[1:]
    tried = set()
    for index, load in enumerate(loads):
        if load + first > capacity or load in tried:  # workers of one load are alike
            continue
        tried.add(load)
        loads[index] += first
        if _packs(rest, loads, capacity):
            return True
        loads[index] -= first
    return False


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
    if "--real-only" in sys.argv:
        print(real_model_figure(small))
        return
    with tempfile.TemporaryDirectory(prefix="bench-evals-") as folder:
        root = Path(folder)
        skill = make_skill(root)
        endpoint = SlowEndpoint(delay)
        with LoopbackServer(endpoint) as server:
            url = server.base_url
            record(skill, url, 1, 2, root / "warm-up")  # imports, the loopback server, a client
            concurrent, floors = [], []
            for number in range(rounds):  # round robin with the raw client
                before = endpoint.requests
                folder = root / ("cassettes" if number == 0 else f"concurrent-{number}")
                concurrent.append(record(skill, url, runs, 8, folder))
                requests = endpoint.requests - before
                chains = recorded_runs(folder)
                assert sum(map(len, chains)) == requests, (chains, requests)
                floors.append(raw_runs(url, chains, 8))
            ideal = requests * delay / 8
            bound = shortest_schedule([len(chain) for chain in chains], 8) * delay
            wall, raw = statistics.median(concurrent), statistics.median(floors)
            print(
                f"1. concurrency: {2 * 2 * runs} runs, {requests} requests of {delay * 1000:.0f} ms"
                f" with --jobs 8: {wall:.2f} s (median of {rounds}:"
                f" {', '.join(f'{value:.2f}' for value in concurrent)}); ideal {ideal:.2f} s;"
                f" ratio {wall / ideal:.2f} (goal <= 1.3); lower bound for these runs"
                f" {bound:.2f} s ({bound / ideal:.2f}); raw openai client, the same runs 8 at"
                f" once: {raw:.2f} s ({raw / ideal:.2f})"
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
        sandbox_cost(skill, root, 2 if small else 10, 1 if small else 3)
    print(real_model_figure(small))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def sandbox_cost(skill: Path, root: Path, runs: int, rounds: int) -> None:
    """Part 4: the same runs with their command in the sandbox and on the local runtime."""
    endpoint = SlowEndpoint(0.0, command="echo 42")
    times: dict[str, list[float]] = {"sandbox": [], "local": []}
    with LoopbackServer(endpoint) as server:
        record(skill, server.base_url, 1, 1, root / "cost-warm-up", "sandbox")
        for number in range(rounds):  # round robin: a busy moment hits both alike
            for runtime in times:
                folder = root / f"cost-{runtime}-{number}"
                times[runtime].append(record(skill, server.base_url, runs, 1, folder, runtime))
    total = 2 * 2 * runs  # 2 evals x 2 configurations
    commands = 2 * runs  # the runs with the skill run the command
    sandbox, local = (statistics.median(times[name]) for name in ("sandbox", "local"))
    print(
        f"4. the sandbox's cost: {total} runs ({commands} with a command), --jobs 1, median of"
        f" {rounds}: sandbox {sandbox / total * 1000:.1f} ms a run, local"
        f" {local / total * 1000:.1f} ms a run; the sandbox's extra cost"
        f" {(sandbox - local) / commands * 1000:.1f} ms a command ({sandbox / local:.2f}x the"
        " local runtime's wall time)"
    )


if __name__ == "__main__":
    main()
