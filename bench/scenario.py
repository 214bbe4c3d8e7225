"""A 10-turn scenario through the direct path and the SDK path, against their floors.

The scenario (9 tool-call turns, then a final text turn) runs on the fixture skills of
the harness tests: listing, loading, doc and tool selection, a stub tool, and two
``skill_run`` commands whose own time is subtracted, so the figures are the harness's
cost, not the commands'.  (The span subtracted is the one a result's ``duration_ms``
covers, timed here to the microsecond: ``duration_ms`` is truncated to whole
milliseconds, which left ~1 ms of command time in every path that runs commands.)

Two floors are measured in the same run, round robin with the paths (a busy moment of
the machine hits all alike):

- the *protocol floor*: the same tool calls made straight on a ``SkillSession`` (no
  model, no loop) - what the direct path cannot go below;
- the *SDK floor*: the same ``openai`` client the harness uses (``OpenAIClientModel``,
  ``chat.completions.create``) posting the same 10 request bodies to a minimal
  keep-alive HTTP server that answers each with its canned completion bytes - what the
  SDK path's transport cannot go below, since the client's own request handling is
  most of it.

    python bench/scenario.py [rounds]

Goals: the scenario without its two commands (8 turns, as most conversations go: no command,
so no workspace) through the SDK within 1.3x its own SDK floor (median against median); with
the commands, the harness adds no more than the client costs: (sdk - direct) / SDK floor
<= 1.0 (median of the rounds' ratios), since the direct path pays the protocol's work and the
workspace's file system, which no client floor holds.  Beside them, the whole scenario through
the SDK against 1.3x the SDK floor, plain (``sdk``) and streamed (``sdk-stream``, against the
streamed floor); one client per conversation, answered in process: no connection (the
connections the SDK path opens are counted).  Printed first: the goals' ratios and whether
they are met; then every path's median and minimum, and secondary ratios.

The commands' time is subtracted, but not what a command leaves behind: a ``python3`` starting
up evicts the test process's data from the CPU caches, and the client's next request runs
slower for it.  Measured beside the goal (not in it): the SDK floor again, with the
scenario's two commands run as plain ``bash -lc`` processes (no namespace, no workspace: none
of the harness's work) at their points between the requests, their time not counted.

Where the protocol's time goes: most of it is the file system work of the conversation's
workspace (folders, staged copies, metadata made at the first ``skill_run`` and removed at
the end), which costs what the file system of the temporary folder makes it cost.  So the
protocol floor and the SDK path are also measured with the workspace on tmpfs
(``/dev/shm``, when there is one): a diagnostic beside the goal, which stays measured
where a run puts its workspaces by default.  Beside it, what the file system charges for each
folder of the workspace (an empty folder made and removed, in the temporary folder and on
tmpfs), and how many folders the conversation's workspace holds: the workspace's layout, a copy
of each skill a command runs in and a folder per run, each made and removed once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_agent_skills.harness import (
    LoopbackServer,
    RunSettings,
    ScriptedBackend,
    ScriptedModel,
    Upstream,
    run_conversation,
)
from pytest_agent_skills.harness.models import OpenAIClientModel
from pytest_agent_skills.harness.turns import completion_body, completion_chunks
from pytest_agent_skills.protocol import SkillSession, ToolPool
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.workspace import Runtime, create_runtime
from pytest_agent_skills.workspace.process import HostProcessTree

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
#: The scenario without its two commands (8 turns), as most conversations go (trigger runs,
#: doc selection, most routing scenarios): no command, so no workspace.
QUIET = [turn for turn in SCRIPT if turn.get("call") != "skill_run"]
GOAL = 1.3
#: What the harness may add, with commands, beyond the direct path: no more than the client's
#: own cost, (sdk - direct) / SDK floor.
ADDED_GOAL = 1.0


class CommandClock:
    """Times each command's run (the span ``duration_ms`` covers: its collection, from
    the start of reading its output to its exit) to the microsecond."""

    def __init__(self) -> None:
        self.spent = 0.0
        real = HostProcessTree.collect

        def timed(tree: HostProcessTree, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return real(tree, **kwargs)
            finally:
                self.spent += time.perf_counter() - started

        HostProcessTree.collect = timed  # type: ignore[method-assign]

    def take_ms(self) -> float:
        spent, self.spent = self.spent, 0.0
        return spent * 1000


COMMANDS = CommandClock()


def through_loop(
    repository: SkillRepository,
    transport: str,
    work_root: Path | None = None,
    settings: RunSettings | None = None,
    **model: Any,
) -> float:
    """One conversation (``model``: a cassette to replay instead of the script), its
    workspace under ``work_root`` when given."""
    COMMANDS.take_ms()
    started = time.perf_counter()
    with local_runtime(work_root) as runtime:
        outcome = run_conversation(
            repository,
            "Weather report for Paris, please.",
            transport=transport,
            tools=TOOLS,
            dynamic_tools=True,
            settings=replace(settings or RunSettings(), runtime=runtime),
            **(model or {"script": SCRIPT}),
        )
    elapsed = (time.perf_counter() - started) * 1000
    assert len(outcome.trajectory.turns) == len(model.get("script", SCRIPT))
    return elapsed - COMMANDS.take_ms()


def recorded_cassette(repository: SkillRepository, folder: Path) -> Path:
    """The scenario recorded once from a scripted upstream (a second loopback server)."""
    cassette = folder / "scenario.json"
    with LoopbackServer(ScriptedBackend(ScriptedModel(SCRIPT))) as upstream:
        upstream_key = Upstream(upstream.base_url, "bench-upstream-key")
        options = RunSettings(record_mode="once", upstream=upstream_key)
        through_loop(repository, "sdk", settings=options, cassette=cassette)
    return cassette


def protocol_floor(
    repository: SkillRepository,
    work_root: Path | None = None,
    *,
    keep: bool = False,
    script: list[dict[str, Any]] = SCRIPT,
) -> float:
    """The tool calls of ``script`` straight on a session: the protocol's own cost (``keep``:
    its workspace is left in ``work_root``)."""
    pool = ToolPool()
    for name, spec in TOOLS.items():
        pool.stub(name, spec["description"], {"type": "object", "properties": {}}, spec["returns"])
    COMMANDS.take_ms()
    started = time.perf_counter()
    with (
        local_runtime(work_root, keep=keep) as runtime,
        SkillSession(repository, tool_pool=pool, dynamic_tools=True, runtime=runtime) as session,
    ):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
        for turn in script:
            session.build_request(messages)
            if "call" in turn:
                session.call(turn["call"], turn.get("args", {}))
    return (time.perf_counter() - started) * 1000 - COMMANDS.take_ms()


@contextlib.contextmanager
def local_runtime(work_root: Path | None, *, keep: bool = False) -> Iterator[Runtime | None]:
    """A local runtime with its workspaces under ``work_root``, made and closed in the timed
    span as a session makes its own; None (the session makes its own) without one."""
    if work_root is None:
        yield None
        return
    with create_runtime("local", work_root=work_root, keep_workspaces=keep) as runtime:
        yield runtime


def workspace_folders(repository: SkillRepository, script: list[dict[str, Any]] = SCRIPT) -> int:
    """How many folders the workspace of ``script`` holds when the conversation ends (its own
    folder included): each is made, and removed, once per conversation."""
    root = Path(tempfile.mkdtemp(prefix="bench-scenario-kept-"))
    try:
        protocol_floor(repository, root, keep=True, script=script)
        return sum(
            not os.path.islink(os.path.join(parent, name))  # the staged skills' links
            for parent, folders, _ in os.walk(root)
            for name in folders
        )
    finally:
        for folder, _, _ in os.walk(root):
            os.chmod(folder, 0o755)  # the staged copies are read-only
        shutil.rmtree(root)


def folder_cost_ms(parent: Path, count: int = 16, rounds: int = 5) -> float:
    """What making and removing one empty folder costs under ``parent`` (median of ``rounds``
    batches of ``count``, made then removed, as a workspace's are): the file system's own
    price for each folder of a workspace."""
    costs = []
    for _ in range(rounds):
        folders = [Path(tempfile.mkdtemp(prefix="bench-folder-", dir=parent))]
        folders[0].rmdir()
        started = time.perf_counter()
        folders = [parent / f"{folders[0].name}-{index}" for index in range(count)]
        for folder in folders:
            folder.mkdir()
        for folder in folders:
            folder.rmdir()
        costs.append((time.perf_counter() - started) * 1000 / count)
    return statistics.median(costs)


def tmpfs_root() -> Path | None:
    """A fresh folder on ``/dev/shm`` (tmpfs), or None where there is none to write to."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    return Path(tempfile.mkdtemp(prefix="bench-scenario-", dir=shm))


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


def floor_requests(
    repository: SkillRepository, stream: bool, script: list[dict[str, Any]] = SCRIPT
) -> tuple[list[dict[str, Any]], MinimalServer]:
    """The request bodies of ``script``, and a minimal server with their canned answers."""
    trajectory = run_conversation(
        repository,
        "Weather report for Paris, please.",
        script=script,
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
        for i, turn in enumerate(script)
    ]
    return requests, MinimalServer(responses)


def sdk_floor_measure(
    repository: SkillRepository, stream: bool, script: list[dict[str, Any]] = SCRIPT
) -> Callable[[], float]:
    """The harness's openai client posting the requests of ``script`` to a minimal server."""
    requests, server = floor_requests(repository, stream, script)

    def measure() -> float:
        started = time.perf_counter()
        # One client per conversation, as ServedModel makes one.
        model = OpenAIClientModel.connect(server.base_url, model="m", stream=stream)
        for request in requests:
            model.complete(request)
        return (time.perf_counter() - started) * 1000

    return measure


def commands_between(repository: SkillRepository) -> dict[int, tuple[str, Path]]:
    """The scenario's commands, by the index of the request that follows each, with the folder
    of a scratch copy of their skill to run in."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-scenario-commands-"))
    commands: dict[int, tuple[str, Path]] = {}
    for index, turn in enumerate(SCRIPT):
        if turn.get("call") == "skill_run":
            skill = repository.get(turn["args"]["skill"])
            folder = scratch / skill.name
            if not folder.exists():
                shutil.copytree(skill.directory, folder)
                (folder / "out").mkdir()
            commands[index + 1] = (turn["args"]["command"], folder)
    return commands


def sdk_floor_with_commands(repository: SkillRepository) -> Callable[[], float]:
    """The SDK floor, the scenario's commands run between its requests, untimed."""
    requests, server = floor_requests(repository, stream=False)
    commands = commands_between(repository)

    def measure() -> float:
        spent = 0.0
        model = OpenAIClientModel.connect(server.base_url, model="m")
        for index, request in enumerate(requests):
            if index in commands:
                command, folder = commands[index]
                subprocess.run(
                    ["bash", "-lc", command], cwd=folder, check=True, stdout=subprocess.DEVNULL
                )
            started = time.perf_counter()
            model.complete(request)
            spent += time.perf_counter() - started
        return spent * 1000

    return measure


def count_connections(repository: SkillRepository, transport: str) -> list[int]:
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
            through_loop(repository, transport)
    finally:
        socket.socket.connect = real  # type: ignore[method-assign]
    return counts


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    repository = SkillRepository([SKILLS])
    cassette = recorded_cassette(repository, Path(tempfile.mkdtemp(prefix="bench-scenario-")))
    measures = {
        "protocol floor": lambda: protocol_floor(repository),
        "direct": lambda: through_loop(repository, "direct"),
        "SDK floor": sdk_floor_measure(repository, stream=False),
        "sdk": lambda: through_loop(repository, "sdk"),
        "SDK floor, streamed": sdk_floor_measure(repository, stream=True),
        "sdk-stream": lambda: through_loop(repository, "sdk-stream"),
        "replayed cassette": lambda: through_loop(repository, "sdk", cassette=cassette),
        "SDK floor, commands": sdk_floor_with_commands(repository),
        "SDK floor, no commands": sdk_floor_measure(repository, stream=False, script=QUIET),
        "sdk, no commands": lambda: through_loop(repository, "sdk", script=QUIET),
    }
    tmpfs = tmpfs_root()
    if tmpfs is not None:
        measures["protocol floor, tmpfs"] = lambda: protocol_floor(repository, tmpfs)
        measures["sdk, tmpfs"] = lambda: through_loop(repository, "sdk", tmpfs)
    for measure in measures.values():
        measure()  # warm-up: imports, the first connection, caches
    load_before = os.getloadavg()[0]
    samples: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            samples[name].append(measure())
    load_after = os.getloadavg()[0]
    median = {name: statistics.median(values) for name, values in samples.items()}
    least = {name: min(values) for name, values in samples.items()}

    print(
        f"10-turn scenario, {rounds} rounds round robin, skill_run command time excluded"
        f" (load average {load_before:.2f} before, {load_after:.2f} after)"
    )

    def per_round(ratio: Callable[..., float], *names: str) -> float:
        columns = [samples[name] for name in names]
        return statistics.median(ratio(*values) for values in zip(*columns, strict=True))

    def verdict(ratio: float, goal: float) -> str:
        return "met" if ratio <= goal else "not met"

    print(
        f"goals: the scenario without commands through the SDK <= {GOAL}x its SDK floor"
        f" (median/median); with commands, the harness adds no more than the client costs:"
        f" (sdk - direct) / SDK floor <= {ADDED_GOAL} (median of the rounds' ratios)"
    )
    quiet, quiet_floor = "sdk, no commands", "SDK floor, no commands"
    goal = median[quiet] / median[quiet_floor]
    print(
        f"  {'no commands: sdk / SDK floor':<34}x{goal:.2f}  {verdict(goal, GOAL)}"
        f"   ({median[quiet]:.1f} / {median[quiet_floor]:.1f} ms;"
        f" minima x{least[quiet] / least[quiet_floor]:.2f})"
    )
    added = per_round(lambda value, dir_, base: (value - dir_) / base, "sdk", "direct", "SDK floor")
    print(
        f"  {'commands: (sdk - direct) / floor':<34}x{added:.2f}  {verdict(added, ADDED_GOAL)}"
        f"   ({median['sdk']:.1f} - {median['direct']:.1f} / {median['SDK floor']:.1f} ms)"
    )
    print(f"the whole scenario through the SDK against {GOAL}x the SDK floor, median/median:")
    pairs = (("sdk", "SDK floor"), ("sdk-stream", "SDK floor, streamed"))
    for path, floor in pairs:
        goal = median[path] / median[floor]
        print(
            f"  {path + ' / ' + floor:<34}x{goal:.2f}  {verdict(goal, GOAL)}"
            f"   ({median[path]:.1f} / {median[floor]:.1f} ms;"
            f" minima x{least[path] / least[floor]:.2f})"
        )
    print(f"  {'path':<22}{'median':>9}{'min':>9}")
    for name in samples:
        print(f"  {name:<22}{median[name]:7.1f}ms{least[name]:7.1f}ms")

    print("secondary ratios (median of the rounds' ratios):")
    for path, floor in pairs:
        beyond = per_round(lambda value, dir_, base: (value - dir_) / base, path, "direct", floor)
        whole = per_round(lambda value, dir_, base: value / (dir_ + base), path, "direct", floor)
        print(f"  {path}: (path - direct) / floor x{beyond:.2f}, / (direct + floor) x{whole:.2f}")
    aftermath = median["SDK floor, commands"] - median["SDK floor"]
    print(
        f"  the commands' aftermath on the client: SDK floor {median['SDK floor']:.1f} ms,"
        f" with the commands run between its requests (untimed) {median['SDK floor, commands']:.1f}"
        f" ms (+{aftermath:.1f} ms); sdk / that floor"
        f" x{median['sdk'] / median['SDK floor, commands']:.2f} (median/median)"
    )
    replayed = per_round(lambda value, base: value / base, "replayed cassette", "SDK floor")
    print(f"  replayed cassette / SDK floor x{replayed:.2f}")
    direct = per_round(lambda value, base: value / base, "direct", "protocol floor")
    print(f"  direct / protocol floor x{direct:.2f}")
    folders = workspace_folders(repository)
    quiet_folders = workspace_folders(repository, QUIET)
    here = Path(tempfile.gettempdir())
    if tmpfs is not None:
        print(
            f"the workspace on tmpfs ({tmpfs.parent}) instead of {here}:"
            f" protocol floor {median['protocol floor, tmpfs']:.1f} ms against"
            f" {median['protocol floor']:.1f} ms; sdk, tmpfs / SDK floor"
            f" x{median['sdk, tmpfs'] / median['SDK floor']:.2f}"
        )
        print(
            f"  a folder made and removed: {folder_cost_ms(here):.3f} ms in {here},"
            f" {folder_cost_ms(tmpfs):.3f} ms on tmpfs; the conversation's workspace makes and"
            f" removes {folders} folders ({quiet_folders} without its commands)"
        )
        tmpfs.rmdir()
    else:
        print("the workspace on tmpfs: not measured (no writable /dev/shm)")
        print(
            f"  a folder made and removed: {folder_cost_ms(here):.3f} ms in {here};"
            f" the conversation's workspace makes and removes {folders} folders"
            f" ({quiet_folders} without its commands)"
        )
    for transport in ("sdk", "sdk-stream"):
        first, second = count_connections(repository, transport)
        print(
            f"TCP connections opened by {transport}: {first} in a conversation, {second} in the"
            " next (none: the harness answers its client in process)"
        )


if __name__ == "__main__":
    main()
