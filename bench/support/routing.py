"""A loopback model that chooses skills by word overlap, and repositories of skills with
trigger queries, for the repository-wide trigger evals and the description loop.

The model reads the skills offered from the system prompt (``- name: description`` lines),
scores each by the words its description shares with the user's query, and loads the best
(``none`` below ``min_overlap``).  Skills tied for the best are taken in turn, the i-th ask
of a query taking the i-th of them in an order shuffled by the seed: the counts over ``k``
runs of a query with ``t`` tied skills are exact whenever ``t`` divides ``k``, whatever
order concurrent runs arrive in, and the seed decides which skill leads.  Asked for a
description (the description loop's request), it writes one from the train split's
failures it was shown: the words of the queries that should have loaded the skill added,
those of the queries that should not have removed.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.support.skill_files import write_skill
from pytest_agent_skills.harness import LoopbackServer, Reply
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall, completion_body

if TYPE_CHECKING:
    from pytest_agent_skills.evals.documents.triggers import MatrixDocument

REPO = Path(__file__).resolve().parents[2]

STOPWORDS = frozenset({
    "about", "and", "are", "can", "could", "for", "from", "how", "into", "please", "the",
    "this", "use", "what", "when", "with", "you", "your",
})  # fmt: skip


def words(text: str) -> set[str]:
    """The words that count for overlap: lower case, three letters or more, no stopword."""
    return {
        word
        for word in re.findall(r"[a-z0-9]+", text.lower())
        if len(word) >= 3 and word not in STOPWORDS
    }


def offered_skills(system: str) -> dict[str, str]:
    """The skills of the prompt's overview, name -> description."""
    overview = system.split("Available skills:", 1)[-1].split("Tooling and workspace", 1)[0]
    return dict(re.findall(r"^- ([a-z0-9-]+): (.*)$", overview, re.M))


def choice(query: str, skills: dict[str, str], min_overlap: int = 1) -> list[str]:
    """The skills tied for the best overlap with ``query`` (none below ``min_overlap``)."""
    asked = words(query)
    scores = {name: len(asked & words(description)) for name, description in skills.items()}
    best = max(scores.values(), default=0)
    if best < min_overlap:
        return []
    return sorted(name for name, score in scores.items() if score == best)


@dataclass
class WordOverlapModel:
    """The backend of a :class:`LoopbackServer`; keeps every request body it answered."""

    seed: int = 3
    min_overlap: int = 1
    bodies: list[dict[str, Any]] = field(default_factory=list)
    _asked: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.bodies.append(body)
        messages = body["messages"]
        if any(m["role"] == "tool" for m in messages):
            return self._reply(ModelTurn(text="Done."), body)
        user = next(m["content"] for m in messages if m["role"] == "user")
        if "<current-description>" in user:
            return self._reply(ModelTurn(text=improved(user)), body)
        system = " ".join(m["content"] or "" for m in messages if m["role"] == "system")
        tied = choice(user, offered_skills(system), self.min_overlap)
        if not tied:
            return self._reply(ModelTurn(text="I can answer that without a skill."), body)
        random.Random(f"{self.seed}:{user}").shuffle(tied)
        with self._lock:
            turn = self._asked[user]
            self._asked[user] += 1
        name = tied[turn % len(tied)]
        call = ToolCall("call_1", "skill_load", json.dumps({"skill_name": name}))
        return self._reply(ModelTurn(tool_calls=(call,)), body)

    def _reply(self, turn: ModelTurn, body: dict[str, Any]) -> Reply:
        answer = completion_body(turn, str(body.get("model", "")), "chatcmpl-routing")
        size = len(json.dumps(body["messages"])) // 40
        answer["usage"] = {"prompt_tokens": size, "completion_tokens": 8, "total_tokens": size + 8}
        return Reply(answer)


def _section(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return found.group(1) if found else ""


def improved(request: str) -> str:
    """A description rewritten from the failures the request shows: the missed queries' words
    added, the words of queries that loaded the skill wrongly taken out."""
    current = _section(request, "current-description")
    missed = _section(request, "should-load-but-did-not")
    wrong = _section(request, "should-not-load-but-did")
    keep = [word for word in current.split() if word.lower().strip(".,") not in words(wrong)]
    added = sorted(words(missed) - words(" ".join(keep)) - words(wrong))
    text = " ".join(keep)
    if added:
        text += " Use for: " + ", ".join(added) + "."
    return f"<description>{text.strip()}</description>"


@contextmanager
def word_overlap_endpoint(seed: int = 3) -> Iterator[tuple[WordOverlapModel, str]]:
    """A running word-overlap model and its base URL."""
    model = WordOverlapModel(seed=seed)
    with LoopbackServer(model) as server:
        yield model, server.base_url


def timeless(document: MatrixDocument) -> MatrixDocument:
    """A triggers-matrix.json without the wall time the matrix took (the one field a replay
    changes)."""
    assert document.summary is not None
    summary = document.summary.model_copy(update={"time_seconds": None})
    return document.model_copy(update={"summary": summary})


def write_repository(root: Path, skills: dict[str, tuple[str, list[tuple[str, bool]]]]) -> Path:
    """``root/skills/<name>`` for each ``name: (description, [(query, should_trigger)])``
    (no ``triggers.json`` for an empty list); returns ``root/skills``.  The description is
    written as a quoted YAML string, so one with ``": "`` in it reads as the text given."""
    folder = root / "skills"
    for name, (description, queries) in skills.items():
        files = {}
        if queries:
            triggers = [{"query": query, "should_trigger": should} for query, should in queries]
            files["evals/triggers.json"] = json.dumps(triggers, indent=2)
        write_skill(
            folder,
            name,
            front=f"name: {name}\ndescription: {json.dumps(description)}\n",
            body=f"The {name} skill's instructions.\n",
            files=files,
        )
    return folder


_TOPICS = [
    "invoice", "receipt", "ledger", "payroll", "budget", "forecast", "audit", "tax",
    "pdf", "docx", "slides", "spreadsheet", "chart", "diagram", "image", "video",
    "email", "calendar", "meeting", "notes", "ticket", "sprint", "release", "deploy",
    "docker", "kubernetes", "terraform", "ansible", "nginx", "postgres", "redis", "kafka",
    "python", "rust", "golang", "typescript", "react", "django", "flask", "pytest",
    "translate", "summarize", "proofread", "citation", "latex", "markdown", "poster", "logo",
    "survey", "resume",
]  # fmt: skip


def many_skills(count: int, queries: int = 6) -> dict[str, tuple[str, list[tuple[str, bool]]]]:
    """``count`` skills (up to 50), each about its own topic and a neighbour's, so that
    neighbours compete: ``queries`` trigger queries each, the last one should-not."""
    skills = {}
    for number in range(count):
        topic, neighbour = _TOPICS[number], _TOPICS[(number + 1) % count]
        description = f"Works with {topic} files and {neighbour} exports. Use for {topic} tasks."
        asked = [
            (f"help with the {topic} {word}", True)
            for word in ("draft", "check", "report", "merge", "export", "review")[: queries - 1]
        ]
        asked.append((f"tell me a story about a {topic} dragon", False))
        skills[f"{topic}-helper"] = (description, asked)
    return skills


def planned_counts(
    skills: dict[str, tuple[str, list[tuple[str, bool]]]], runs: int, seed: int = 3
) -> list[Any]:
    """The counts the word-overlap model gives ``runs`` runs of each query of ``skills``
    (with every skill offered), without a server: for the report's tests."""
    from pytest_agent_skills.evals.documents.triggers import MatrixQuery

    offered = {name: description for name, (description, _queries) in skills.items()}
    counts = []
    for owner, (_description, queries) in skills.items():
        for query, should in queries:
            tied = choice(query, offered)
            random.Random(f"{seed}:{query}").shuffle(tied)
            loaded = Counter(tied[turn % len(tied)] if tied else "none" for turn in range(runs))
            counts.append(
                MatrixQuery(
                    query=query,
                    owner=owner,
                    should_trigger=should,
                    runs=runs,
                    loaded=dict(sorted(loaded.items())),
                )
            )
    return counts


def agent_skills(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``agent-skills ARGS`` of this checkout as its own process in ``cwd``, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
