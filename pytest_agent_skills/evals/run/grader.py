"""The grader: a run's string expectations judged by a model in one request.

The request carries the expectations, the run's transcript (messages, tool calls and their
results) and its output files (names, sizes, the text of text files up to a limit), with
this machine's paths under stable names so that a replay asks the same.  The answer is a
JSON object in the message content with grading.json's names, asked for in the structured
output mode the endpoint accepts (see :mod:`.grader_output`); in plain text the object is
taken from the reply, bare or in a fenced block.  An answer that is not that object, or
grades other texts than were asked, is asked again once; then the run is a grading error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import AgentSkillsError
from ...harness.cassette import UpstreamRejectedError
from ...harness.errors import HarnessError
from ...harness.runner import ServedModel
from ...harness.trajectory import VOLATILE_RESULT_FIELDS, Trajectory
from ..documents.benchmark_model import ExpectationVerdict
from .converse import ModelAccess
from .grader_output import MODES, NEGOTIATED, mode_of, recorded_mode, response_format
from .transport import RunCassette, final_rejection

#: Characters of one output file's text the grader sees.
FILE_TEXT_LIMIT = 20_000
#: Characters of an expectation's evidence the grader may write, where the server enforces it.
EVIDENCE_LIMIT = 300
#: Characters of the whole grading request's transcript and files.
TOTAL_TEXT_LIMIT = 200_000
#: Quotes of one expectation, and characters of one, the grader may write where the server
#: enforces the schema.
QUOTES_LIMIT, QUOTE_LIMIT = 3, 200
#: How the transcript's lines of the agent's part begin (the user's message comes before).
AGENT_MARKERS = ("[assistant] ", "[tool call] ", "[tool result", "[final answer] ")

GRADER_INSTRUCTIONS = """\
You grade the run of an AI agent against expectations. For each expectation, decide from
the transcript and the output files whether it holds: pass only on clear evidence of real
task completion (a file with the right content, not just the right name); when uncertain,
fail. Cite the evidence (a quote, or what you found missing), and give in "quotes" the exact
words of the agent's messages, tool results, final answer or output files that show it,
copied verbatim: a pass whose quotes are not found in the run does not count.

Answer with only a JSON object, no other text:
{"expectations": [{"text": "<the expectation, exactly as given>", "passed": true or false,
"evidence": "<the evidence>", "quotes": ["<verbatim excerpt of the run>"]}]}
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
                "required": ["text", "passed", "evidence", "quotes"],
                "properties": {
                    "text": {"type": "string"},
                    "passed": {"type": "boolean"},
                    "evidence": {"type": "string"},
                    "quotes": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}


class GradingError(AgentSkillsError):
    """The grader did not answer with the grading object, twice."""


def judged(
    text: str, passed: bool, evidence: str, quotes: Sequence[str] = ()
) -> ExpectationVerdict:
    """One expectation judged, ``supported`` (fails and code checks need no quote; a grader's
    pass is checked against the run afterwards: see :mod:`.quotes`)."""
    return ExpectationVerdict(
        text=text, passed=passed, evidence=evidence, quotes=list(quotes), supported=True
    )


@dataclass(frozen=True)
class GradingRequest:
    """What one run asks its grader: the expectations and the run's evidence as text."""

    expectations: tuple[str, ...]
    transcript: str
    files: str
    cassette: Path


@dataclass(frozen=True)
class Grading:
    """A grading: the graded expectations, the requests it took (1 or 2), and the structured
    output mode its answers were asked in (one of :data:`~.grader_output.MODES`)."""

    graded: list[ExpectationVerdict]
    requests: int
    output: str


def grade(access: ModelAccess, request: GradingRequest) -> Grading:
    """The grading of ``request``'s expectations; a :class:`GradingError` when the second
    answer is not the grading object either."""
    model = access.options.grader
    cassette = access.cassette(request.cassette, {})
    served = ServedModel(cassette, model_name=model, stream=False, in_process=True)
    asking = _Asking(served, access, request, _first_mode(cassette))
    problems: list[str] = []
    try:
        body = asking.body()
        for requests in (1, 2):
            answer = asking.complete(body)
            graded, problem = parse_grading(answer, request.expectations)
            if graded is not None:
                served.finish()
                return Grading(graded, requests, asking.mode)
            problems.append(problem)
            body = asking.body()
            body["messages"] = [
                *body["messages"],
                {"role": "assistant", "content": answer},
                {
                    "role": "user",
                    "content": f"That answer is not the grading object: {problem}. Answer again"
                    " with only the JSON object, one entry per expectation, each 'text' exactly"
                    " as given.",
                },
            ]
        served.finish()
        raise GradingError(
            f"the grader ({model}) did not answer with the grading object, asked twice:"
            f" {problems[0]}; then {problems[1]}"
        )
    except HarnessError:
        cassette.save_partial()
        raise
    finally:
        served.close()


def _first_mode(cassette: RunCassette) -> str | None:
    """The mode a replayed grading was recorded in (None: the one negotiated)."""
    if cassette.rerecord:
        return None
    return recorded_mode(item.request.get("body") for item in cassette.cassette.interactions)


class _Asking:
    """Grading requests sent in the structured output mode the endpoint accepts: one it
    refuses for good is asked again in the next mode; the mode that works is kept."""

    def __init__(
        self, served: ServedModel, access: ModelAccess, request: GradingRequest, mode: str | None
    ) -> None:
        self.served = served
        self.model = access.options.grader
        upstream = access.options.upstream
        self.endpoint = upstream.endpoint if upstream else ""
        self.request = request
        #: The grader's request parameters (``--grader-param``), added to every body.
        self.params = dict(access.options.grader_params)
        given = (
            mode_of({"messages": [], **self.params}) if "response_format" in self.params else None
        )
        self.mode = given or mode or NEGOTIATED.current(self.endpoint, self.model)

    def body(self) -> dict[str, Any]:
        return {**grading_body(self.model, self.request, self.mode), **self.params}

    def complete(self, body: dict[str, Any]) -> str:
        """The text of the answer to ``body`` (its ``response_format`` set for the mode; one
        given with ``--grader-param`` is sent as it is, never negotiated)."""
        if "response_format" in self.params:
            return self.served.complete(body).text or ""
        refusal: UpstreamRejectedError | None = None
        for mode in MODES[MODES.index(self.mode) :]:
            # The expectations asked are pinned in the json_object mode's schema.
            _set_mode(body, mode, self.request.expectations)
            try:
                text: str = self.served.complete(body).text or ""
            except UpstreamRejectedError as error:
                if not final_rejection(error.status, error.answer, body):
                    raise
                refusal = refusal or error
                continue
            if mode != self.mode:
                NEGOTIATED.worked(self.endpoint, self.model, mode)
                self.mode = mode
            return text
        assert refusal is not None
        raise refusal  # every mode refused: the first refusal says why


def _set_mode(body: dict[str, Any], mode: str, asked: Sequence[str]) -> None:
    shape = response_format(mode, pinned_schema(asked) if mode == "json_object" else GRADING_SCHEMA)
    if shape is None:
        body.pop("response_format", None)
    else:
        body["response_format"] = shape


def grading_body(model: str, request: GradingRequest, mode: str = MODES[0]) -> dict[str, Any]:
    """The chat-completions request of a grading, asking for the answer in ``mode``."""
    listed = "\n".join(f"{number}. {text}" for number, text in enumerate(request.expectations, 1))
    content = (
        f"Expectations:\n{listed}\n\n== Transcript ==\n{request.transcript}\n\n"
        f"== Output files ==\n{request.files or '(none)'}"
    )
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": GRADER_INSTRUCTIONS},
            {"role": "user", "content": content},
        ],
    }
    _set_mode(body, mode, request.expectations)
    return body


def pinned_schema(asked: Sequence[str]) -> dict[str, Any]:
    """The grading schema with one entry per expectation asked, each ``text`` one of them,
    evidence of at most :data:`EVIDENCE_LIMIT` characters: sent beside ``json_object``, whose
    servers (llama.cpp's) enforce it as a grammar, so that a small model can only answer the
    object asked for.  (The ``json_schema`` request keeps the fixed schema: recorded gradings
    match it.)"""
    entry = GRADING_SCHEMA["properties"]["expectations"]["items"]
    properties = {
        **entry["properties"],
        "text": {"type": "string", "enum": list(dict.fromkeys(asked))},
        "evidence": {"type": "string", "maxLength": EVIDENCE_LIMIT},
        "quotes": {
            "type": "array",
            "items": {"type": "string", "maxLength": QUOTE_LIMIT},
            "maxItems": QUOTES_LIMIT,
        },
    }
    listed = {
        **GRADING_SCHEMA["properties"]["expectations"],
        "items": {**entry, "properties": properties},
        "minItems": len(asked),
        "maxItems": len(asked),
    }
    return {**GRADING_SCHEMA, "properties": {"expectations": listed}}


def json_object_in(content: str) -> Any:
    """The JSON value of a reply: the whole text, else the first fenced block that holds
    JSON, else the first object in the text; a ``ValueError`` when there is none."""
    text = content.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in re.findall(r"```[A-Za-z]*\s*\n?(.*?)```", text, re.S):
        try:
            return json.loads(block)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for found in re.finditer(r"\{", text):
        try:
            return decoder.raw_decode(text, found.start())[0]
        except ValueError:
            continue
    raise ValueError("no JSON object in the text")


def parse_grading(
    content: str, asked: Sequence[str]
) -> tuple[list[ExpectationVerdict] | None, str]:
    """The graded expectations in ``asked``'s order, or None and what is wrong."""
    try:
        data = json_object_in(content)
    except ValueError:
        return None, f"not JSON ({content[:120]!r})"
    entries = data.get("expectations") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None, "no 'expectations' list in the object"
    found: dict[str, ExpectationVerdict] = {}
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("text"), str)
            or not isinstance(entry.get("passed"), bool)
        ):
            return None, "an entry without a 'text' string and a 'passed' boolean"
        evidence = entry.get("evidence")
        quotes = entry.get("quotes")
        quotes = quotes if isinstance(quotes, list) else []
        found[entry["text"].strip()] = judged(
            entry["text"],
            entry["passed"],
            evidence if isinstance(evidence, str) else "",
            [quote for quote in quotes if isinstance(quote, str)],
        )
    missing = [text for text in asked if text.strip() not in found]
    extra = sorted(set(found) - {text.strip() for text in asked})
    if missing or extra:
        return None, f"it grades other texts than were asked (missing {missing}, extra {extra})"
    return [found[text.strip()].model_copy(update={"text": text}) for text in asked], ""


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
