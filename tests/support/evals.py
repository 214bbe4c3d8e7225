"""Pieces of the eval tests: a skill with evals, and an OpenAI-compatible upstream (served
by the project's loopback server) playing a seeded stochastic agent and a grader."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Eval options against a loopback endpoint, which the bench scripts use too: bench's.
from bench.support.recording import recording as recording
from bench.support.recording import replaying as replaying
from bench.support.routing import agent_skills
from pytest_agent_skills.evals.documents.document_io import document_bytes
from pytest_agent_skills.harness import LoopbackServer, Reply
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall, completion_body
from pytest_agent_skills.typed_documents import Document
from tests.support.skill_files import write_skill

STATS_SCRIPT = """\
import csv, json, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
values = [float(row["value"]) for row in rows]
os.makedirs("out", exist_ok=True)
json.dump({"mean": sum(values) / len(values)}, open("out/stats.json", "w"))
print("mean", sum(values) / len(values))
"""

EVALS = {
    "skill_name": "csv-stats",
    "evals": [
        {
            "id": 1,
            "name": "mean of a column",
            "prompt": "What is the mean of the value column in data.csv?",
            "files": ["evals/files/data.csv"],
            "expectations": [
                "The answer gives the mean the script computed",
                {"files": [{"path": "out/stats.json", "contains": "mean"}]},
            ],
        },
        {
            "id": 2,
            "name": "mean, said plainly",
            "prompt": "Tell me the average value in data.csv, please.",
            "files": ["evals/files/data.csv"],
            "assertions": ["The answer gives the mean the script computed"],
        },
    ],
}

#: Three evals of three string expectations each, for the grader of ``grader_pass``: runs
#: that pass some of their expectations (not pass/fail), flaky expectations.
EXPECTATIONS = ["The answer names the mean", "The answer is short", "The answer is polite"]
NOISY_EVALS = {
    "skill_name": "csv-stats",
    "evals": [
        {"id": number, "name": f"noisy {number}", "prompt": f"Noisy question {number}?",
         "files": ["evals/files/data.csv"], "expectations": EXPECTATIONS}
        for number in (1, 2, 3)
    ],
}  # fmt: skip

TRIGGERS = [
    {"query": "What is the mean of the value column of my CSV?", "should_trigger": True},
    {"query": "Write me a haiku about autumn.", "should_trigger": False},
]


def write_eval_skill(
    root: Path, *, description: str = "", evals: dict[str, Any] | None = None
) -> Path:
    """``root/skills/csv-stats`` (with evals, triggers and an input file) beside a second
    skill, ``root/skills/notes``, that stays in every configuration; ``evals`` replaces
    :data:`EVALS`."""
    skills = root / "skills"
    write_skill(skills, "notes", body="Keep notes.\n")
    front = (
        "name: csv-stats\ndescription: "
        + (description or "Computes statistics of CSV files. Use when asked about a CSV.")
        + "\n"
    )
    return write_skill(
        skills,
        "csv-stats",
        front=front,
        body="Run `python3 scripts/stats.py work/inputs/data.csv` and report the mean.\n",
        files={
            "scripts/stats.py": STATS_SCRIPT,
            "evals/evals.json": json.dumps(evals or EVALS, indent=2),
            "evals/triggers.json": json.dumps(TRIGGERS, indent=2),
            "evals/files/data.csv": "value\n1\n2\n3\n6\n",
        },
    )


REPO = Path(__file__).resolve().parents[2]


def run_eval_command(
    *args: str, cwd: Path, timeout: float = 600, command: str = "eval"
) -> subprocess.CompletedProcess[str]:
    """``agent-skills eval ARGS`` (or another ``command``) as a user runs it (its own process,
    this checkout's package)."""
    return agent_skills(command, *args, cwd=cwd, timeout=timeout)


@dataclass
class Behaviour:
    """How the fake endpoint behaves."""

    seed: int = 7
    #: Chance that the agent, offered the skill, uses it (and so gets the mean right).
    uses_skill: float = 0.7
    #: Chance that the agent guesses the mean right without the skill.
    lucky_guess: float = 0.3
    #: Requests answered HTTP 429 first (with Retry-After: 0), then normally.
    rate_limited: int = 0
    #: Grader answers that are not the grading object before good ones (-1: always bad).
    bad_gradings: int = 0
    #: Seconds each answer waits.
    delay: float = 0.0
    #: With a rate: the grader passes each expectation with this chance, whatever the run
    #: did (draws from a seeded stream per eval prompt), so the true pass rate is this rate.
    grader_pass: float | None = None
    #: Grader requests refused by their structured output mode (``json_schema``,
    #: ``json_object``, ``text``): the status and the error body answered, as real servers do
    #: (see :data:`REFUSALS`).
    refuses: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    #: Grader answers in a fenced block after a sentence, as a model asked for plain text.
    chatty_grader: bool = False
    #: ``uses_skill`` per agent model (the request's ``model``), for evals on several models.
    uses_skill_by_model: dict[str, float] = field(default_factory=dict)
    #: The agent never answers: it lists the skills again and again.
    loops: bool = False
    #: The grader passes every expectation with these quotes, whatever the run said.
    invented_quotes: list[str] = field(default_factory=list)


def grading_stream(behaviour: Behaviour, prompt: str) -> random.Random:
    """The seeded stream the grader of ``grader_pass`` draws from for one eval prompt."""
    return random.Random(f"{behaviour.seed}:grade|{prompt}")


def simulated_pass_rates(
    behaviour: Behaviour, prompt: str, runs: int, expectations: int
) -> list[float]:
    """The pass rates ``runs`` graded runs of one eval get from the ``grader_pass`` grader,
    in the order it grades them: the model's statistics without the harness."""
    assert behaviour.grader_pass is not None
    stream = grading_stream(behaviour, prompt)
    return [
        sum(stream.random() < behaviour.grader_pass for _ in range(expectations)) / expectations
        for _ in range(runs)
    ]


#: How real servers refuse a ``response_format``, as they answer it.
REFUSALS: dict[str, tuple[int, dict[str, Any]]] = {
    # llama-cpp-python's server: its request validation error, answered as HTTP 500.
    "llama.cpp json_schema": (
        500,
        {
            "error": {
                "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format',"
                " 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input':"
                " 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}]",
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        },
    ),
    # OpenAI's API (a model without structured outputs): HTTP 400 naming the parameter.
    "openai json_schema": (
        400,
        {
            "error": {
                "message": "Invalid parameter: 'response_format' of type 'json_schema' is not"
                " supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        },
    ),
    # LM Studio: json_schema or text only.
    "lmstudio json_object": (
        400,
        {"error": "'response_format.type' must be 'json_schema' or 'text'"},
    ),
    # A proxy that knows no response_format at all.
    "unknown field": (
        400,
        {"error": {"message": "Unrecognized request argument supplied: response_format"}},
    ),
}


@dataclass
class FakeEndpoint:
    """The backend of a :class:`LoopbackServer`: a seeded stochastic agent and a grader."""

    behaviour: Behaviour = field(default_factory=Behaviour)
    requests: int = 0
    grader_requests: int = 0
    refused: int = 0
    #: Every request body received, in order.
    bodies: list[dict[str, Any]] = field(default_factory=list)
    #: The structured output mode of every grader request, refused ones too, in order.
    grader_modes: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _streams: dict[str, random.Random] = field(default_factory=dict)

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        if self.behaviour.delay:
            time.sleep(self.behaviour.delay)
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            if self.refused < self.behaviour.rate_limited:
                self.refused += 1
                return Reply(
                    {"error": {"message": "rate limited", "type": "rate_limit"}},
                    429,
                    {"Retry-After": "0"},
                )
        if is_grading(body):
            return self._grade(body)
        return self._act(body)

    def _draw(self, key: str) -> float:
        """One draw from the seeded stream of ``key`` (an eval and a configuration): the
        same draws per stream whatever order concurrent runs come in."""
        with self._lock:
            stream = self._streams.setdefault(key, random.Random(f"{self.behaviour.seed}:{key}"))
            return stream.random()

    def _act(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if self.behaviour.loops:
            call = ToolCall(f"call_{len(messages)}", "skill_list", "{}")
            return self._turn(ModelTurn(tool_calls=(call,)), body)
        system = " ".join(m["content"] or "" for m in messages if m["role"] == "system")
        user = next(m["content"] for m in messages if m["role"] == "user")
        offered = "csv-stats" in system
        tools_done = [m for m in messages if m["role"] == "tool"]
        if not tools_done:
            model = str(body.get("model", ""))
            uses_skill = self.behaviour.uses_skill_by_model.get(model, self.behaviour.uses_skill)
            key = f"{model}|" if self.behaviour.uses_skill_by_model else ""
            chance = self._draw(f"{key}{user}|{offered}")
            if offered and chance < uses_skill and "haiku" not in user:
                call = ToolCall("call_1", "skill_load", json.dumps({"skill_name": "csv-stats"}))
                return self._turn(ModelTurn(tool_calls=(call,)), body)
            lucky = chance < self.behaviour.lucky_guess
            return self._turn(ModelTurn(text="The mean is " + ("3" if lucky else "about 5")), body)
        if len(tools_done) == 1:
            command = "python3 scripts/stats.py work/inputs/data.csv"
            arguments = json.dumps({"skill": "csv-stats", "command": command})
            return self._turn(
                ModelTurn(tool_calls=(ToolCall("call_2", "skill_run", arguments),)), body
            )
        found = re.search(r"mean ([0-9.]+)", tools_done[-1]["content"] or "")
        mean = found.group(1) if found else "unknown"
        return self._turn(ModelTurn(text=f"The script computed the mean: {mean}"), body)

    def _grade(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            mode = grader_mode(body)
            self.grader_modes.append(mode)
            if mode in self.behaviour.refuses:
                status, answer = self.behaviour.refuses[mode]
                return Reply(answer, status)
            self.grader_requests += 1
            bad = self.behaviour.bad_gradings
            answer_badly = bad < 0 or self.grader_requests <= bad
        if answer_badly:
            return self._turn(ModelTurn(text="All expectations look fine to me!"), body)
        content = body["messages"][1]["content"]
        asked = re.findall(r"^\d+\. (.*)$", content.split("== Transcript ==")[0], re.M)
        final = re.search(r"^\[final answer\] (.*)$", content, re.M)
        right = bool(final and re.search(r"\b3(\.0)?\b", final.group(1)))
        verdicts = [right] * len(asked)
        if self.behaviour.invented_quotes:
            verdicts = [True] * len(asked)
        if self.behaviour.grader_pass is not None:
            prompt = re.search(r"^\[user\] (.*)$", content, re.M)
            key = prompt.group(1) if prompt else ""
            with self._lock:
                stream = self._streams.setdefault(
                    "grade|" + key, grading_stream(self.behaviour, key)
                )
                verdicts = [stream.random() < self.behaviour.grader_pass for _ in asked]
        grading = {
            "expectations": [
                {
                    "text": text,
                    "passed": passed,
                    "evidence": f"final answer: {final.group(1) if final else '(none)'}",
                    "quotes": self.behaviour.invented_quotes or ([final.group(1)] if final else []),
                }
                for text, passed in zip(asked, verdicts, strict=True)
            ]
        }
        if self.behaviour.chatty_grader:
            text = f"Here is my grading:\n```json\n{json.dumps(grading, indent=1)}\n```\nDone."
            return self._turn(ModelTurn(text=text), body)
        return self._turn(ModelTurn(text=json.dumps(grading)), body)

    def _turn(self, turn: ModelTurn, body: dict[str, Any]) -> Reply:
        with self._lock:
            number = self.requests
        answer = completion_body(turn, str(body.get("model", "")), f"chatcmpl-{number}")
        size = len(json.dumps(body["messages"])) // 40
        answer["usage"] = {
            "prompt_tokens": size,
            "completion_tokens": 10,
            "total_tokens": size + 10,
        }
        return Reply(answer)


def is_grading(body: dict[str, Any]) -> bool:
    """Whether ``body`` is a grader's request (whatever its structured output mode)."""
    first = body["messages"][0]
    return first["role"] == "system" and str(first["content"]).startswith("You grade the run")


def grader_mode(body: dict[str, Any]) -> str:
    """The structured output mode of a grader's request: its ``response_format`` type."""
    shape = body.get("response_format")
    return "text" if shape is None else str(shape["type"])


@contextmanager
def fake_endpoint(behaviour: Behaviour | None = None) -> Iterator[tuple[FakeEndpoint, str]]:
    """A running fake endpoint and its base URL."""
    endpoint = FakeEndpoint(behaviour or Behaviour())
    with LoopbackServer(endpoint) as server:
        yield endpoint, server.base_url


@dataclass
class CommandAgent:
    """The backend of a :class:`LoopbackServer`: an agent that loads ``skill``, runs
    ``command`` with ``skill_run`` (none when it is empty), then answers ``final``; a grader
    that says every expectation is met (or, with ``passed`` false, unmet) with ``evidence``."""

    skill: str
    command: str
    final: str = "done"
    evidence: str = "the run ended"
    #: What the grader says of every expectation.
    passed: bool = True
    #: What the grader quotes (None: the final answer, which the run has).
    quotes: list[str] | None = None
    results: list[str] = field(default_factory=list)

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        if "response_format" in body:
            content = body["messages"][1]["content"]
            asked = re.findall(r"^\d+\. (.*)$", content.split("== Transcript ==")[0], re.M)
            grading = {
                "expectations": [
                    {
                        "text": text,
                        "passed": self.passed,
                        "evidence": self.evidence,
                        "quotes": [self.final] if self.quotes is None else self.quotes,
                    }
                    for text in asked
                ]
            }
            return self._reply(ModelTurn(text=json.dumps(grading)), body)
        tools_done = [m for m in body["messages"] if m["role"] == "tool"]
        if not tools_done:
            call = ToolCall("c1", "skill_load", json.dumps({"skill_name": self.skill}))
            return self._reply(ModelTurn(tool_calls=(call,)), body)
        if len(tools_done) == 1 and self.command:
            arguments = json.dumps({"skill": self.skill, "command": self.command})
            call = ToolCall("c2", "skill_run", arguments)
            return self._reply(ModelTurn(tool_calls=(call,)), body)
        self.results.append(tools_done[-1]["content"] or "")
        return self._reply(ModelTurn(text=self.final), body)

    def _reply(self, turn: ModelTurn, body: dict[str, Any]) -> Reply:
        answer = completion_body(turn, str(body.get("model", "")), "chatcmpl-command")
        answer["usage"] = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
        return Reply(answer)


@contextmanager
def command_agent(agent: CommandAgent) -> Iterator[str]:
    """``agent`` served on a loopback port: its base URL."""
    with LoopbackServer(agent) as server:
        yield server.base_url


def no_isolation(tmp_path: Path) -> dict[str, str]:
    """An environment (this checkout first on PYTHONPATH) in which neither bubblewrap nor a
    Docker engine is found: PATH is a folder of links to every program but ``bwrap``, and
    DOCKER_HOST a socket that is not there."""
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir(parents=True)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            target = folder / name
            if name != "bwrap" and not os.path.lexists(target):
                target.symlink_to(os.path.join(directory, name))
    return {
        **os.environ,
        "PATH": str(folder),
        "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock",
        "PYTHONPATH": str(REPO),
    }


def written(document: Document) -> dict[str, Any]:
    """``document`` as its file has it: the JSON value of the bytes written."""
    value: dict[str, Any] = json.loads(document_bytes(document))
    return value
