"""The grader: a run's string expectations judged by a model in one request.

The request carries the expectations, the run's transcript (messages, tool calls and their
results) and its output files (names, sizes, the text of text files up to a limit), with
this machine's paths under stable names so that a replay asks the same.  The answer is a
JSON object in the message content with grading.json's names (``response_format`` with
its JSON schema is sent too).  An answer that is not that object, or grades other texts
than were asked, is asked again once; then the run is a grading error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentSkillsError
from ..harness.errors import HarnessError
from ..harness.runner import ServedModel
from ..harness.trajectory import VOLATILE_RESULT_FIELDS, Trajectory
from .conversation import ModelAccess

#: Characters of one output file's text the grader sees.
FILE_TEXT_LIMIT = 20_000
#: Characters of the whole grading request's transcript and files.
TOTAL_TEXT_LIMIT = 200_000

GRADER_INSTRUCTIONS = """\
You grade the run of an AI agent against expectations. For each expectation, decide from
the transcript and the output files whether it holds: pass only on clear evidence of real
task completion (a file with the right content, not just the right name); when uncertain,
fail. Cite the evidence (a quote, or what you found missing).

Answer with only a JSON object, no other text:
{"expectations": [{"text": "<the expectation, exactly as given>", "passed": true or false,
"evidence": "<the evidence>"}]}
with one entry per expectation, in the order given."""

GRADING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["expectations"],
    "properties": {
        "expectations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["text", "passed", "evidence"],
                "properties": {
                    "text": {"type": "string"},
                    "passed": {"type": "boolean"},
                    "evidence": {"type": "string"},
                },
            },
        }
    },
}


class GradingError(AgentSkillsError):
    """The grader did not answer with the grading object, twice."""


@dataclass(frozen=True)
class Graded:
    """One expectation judged: grading.json's ``{text, passed, evidence}``."""

    text: str
    passed: bool
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "passed": self.passed, "evidence": self.evidence}


@dataclass(frozen=True)
class GradingRequest:
    """What one run asks its grader: the expectations and the run's evidence as text."""

    expectations: tuple[str, ...]
    transcript: str
    files: str
    cassette: Path


def grade(access: ModelAccess, request: GradingRequest) -> tuple[list[Graded], int]:
    """The grading of ``request``'s expectations and the requests it took (1 or 2); a
    :class:`GradingError` when the second answer is not the grading object either."""
    model = access.options.grader
    cassette = access.cassette(request.cassette, {})
    served = ServedModel(cassette, model_name=model, stream=False, in_process=True)
    try:
        body = {**grading_body(model, request), **access.options.grader_params}
        first = served.complete(body).text or ""
        graded, problem = parse_grading(first, request.expectations)
        if graded is not None:
            served.finish()
            return graded, 1
        body["messages"] = [
            *body["messages"],
            {"role": "assistant", "content": first},
            {
                "role": "user",
                "content": f"That answer is not the grading object: {problem}. Answer again"
                " with only the JSON object, one entry per expectation, each 'text' exactly as"
                " given.",
            },
        ]
        second = served.complete(body).text or ""
        graded, again = parse_grading(second, request.expectations)
        served.finish()
        if graded is None:
            raise GradingError(
                f"the grader ({model}) did not answer with the grading object, asked twice:"
                f" {problem}; then {again}"
            )
        return graded, 2
    except HarnessError:
        cassette.save_partial()
        raise
    finally:
        served.close()


def grading_body(model: str, request: GradingRequest) -> dict[str, Any]:
    """The chat-completions request of a grading."""
    listed = "\n".join(f"{number}. {text}" for number, text in enumerate(request.expectations, 1))
    content = (
        f"Expectations:\n{listed}\n\n== Transcript ==\n{request.transcript}\n\n"
        f"== Output files ==\n{request.files or '(none)'}"
    )
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": GRADER_INSTRUCTIONS},
            {"role": "user", "content": content},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "grading", "strict": True, "schema": GRADING_SCHEMA},
        },
    }


def parse_grading(content: str, asked: Sequence[str]) -> tuple[list[Graded] | None, str]:
    """The graded expectations in ``asked``'s order, or None and what is wrong."""
    text = content.strip()
    if text.startswith("```"):  # a fenced block: the object inside it
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return None, f"not JSON ({content[:120]!r})"
    entries = data.get("expectations") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None, "no 'expectations' list in the object"
    found: dict[str, Graded] = {}
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("text"), str)
            or not isinstance(entry.get("passed"), bool)
        ):
            return None, "an entry without a 'text' string and a 'passed' boolean"
        evidence = entry.get("evidence")
        found[entry["text"].strip()] = Graded(
            entry["text"], entry["passed"], evidence if isinstance(evidence, str) else ""
        )
    missing = [text for text in asked if text.strip() not in found]
    extra = sorted(set(found) - {text.strip() for text in asked})
    if missing or extra:
        return None, f"it grades other texts than were asked (missing {missing}, extra {extra})"
    return [
        Graded(text, found[text.strip()].passed, found[text.strip()].evidence) for text in asked
    ], ""


def transcript_text(trajectory: Trajectory, paths: Mapping[str, str]) -> str:
    """The run as the grader reads it: the user message, each turn's text, tool calls and
    results, and the final answer; ``paths`` (this machine's) under their stable names."""
    lines = [f"[user] {trajectory.user}"]
    for turn in trajectory.turns:
        if turn.text:
            lines.append(f"[assistant] {turn.text}")
        for call in turn.calls:
            lines.append(f"[tool call] {call.name} {call.raw_arguments}")
            flag = " (error)" if call.is_error else ""
            lines.append(f"[tool result{flag}] {_result(call.result)}")
    if trajectory.final is not None:
        lines.append(f"[final answer] {trajectory.final}")
    return stable(_cut("\n".join(lines), TOTAL_TEXT_LIMIT), paths)


def files_text(outputs: Mapping[str, bytes], paths: Mapping[str, str]) -> str:
    """The output files: name, size and (text files) content up to :data:`FILE_TEXT_LIMIT`."""
    parts = []
    for name, content in sorted(outputs.items()):
        try:
            shown = _cut(content.decode("utf-8"), FILE_TEXT_LIMIT)
        except UnicodeDecodeError:
            shown = "(binary)"
        parts.append(f"--- out/{name} ({len(content)} bytes)\n{shown}")
    return stable(_cut("\n".join(parts), TOTAL_TEXT_LIMIT), paths)


def stable(text: str, paths: Mapping[str, str]) -> str:
    """``text`` with this machine's ``paths`` replaced by their stable names, longest first."""
    for old, new in sorted(paths.items(), key=lambda item: -len(item[0])):
        if old:
            text = text.replace(old, new)
    return text


def _result(result: Any) -> str:
    if isinstance(result, dict):
        result = {k: v for k, v in result.items() if k not in VOLATILE_RESULT_FIELDS}
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters cut)"
