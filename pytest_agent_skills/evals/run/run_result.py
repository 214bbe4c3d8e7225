"""What one eval run gave, and its files: grading.json, timing.json, metrics.json and
transcript.json with skill-creator's names (and the eval output folder's contract)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...harness.trajectory import Trajectory
from ..documents.benchmark_model import ExpectationVerdict, RunErrorRecord

#: The wall times of timing.json that grading.json repeats (skill-creator's).
GRADING_TIMES = ("executor_duration_seconds", "grader_duration_seconds", "total_duration_seconds")


@dataclass(frozen=True)
class RunKey:
    """Which run: of which eval, in which configuration, its number from 1."""

    eval_id: int
    configuration: str
    run_number: int

    @property
    def run_dir(self) -> str:
        return f"eval-{self.eval_id}/{self.configuration}/run-{self.run_number}"


@dataclass(frozen=True)
class EvalRunResult:
    key: RunKey
    eval_name: str
    prompt: str
    expectations: tuple[ExpectationVerdict, ...]
    error: RunErrorRecord | None
    #: timing.json (the run's recorded wall times).
    timing: dict[str, Any]
    tokens: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    transcript: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    #: The files of the workspace's out/ folder, by path below it.
    outputs: dict[str, bytes] = field(default_factory=dict, compare=False)
    #: The structured output mode the grader's answers were asked in (None: not asked).
    grader_output: str | None = None
    #: Why the run stopped before the model's final answer (``turn_limit``, ``run_tokens``)
    #: or never started (``budget``); None when it ended on its own or failed.
    stop_reason: str | None = None
    #: Never started: the eval's token budget was spent.  Neither a pass nor an error.
    skipped: bool = False
    #: benchmark.json's ``runs[].notes``: why it stopped, the bounds it hit (see :mod:`.bounds`).
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        if self.error or self.skipped:
            return 0
        return sum(item.passed for item in self.expectations)

    @property
    def unsupported(self) -> int:
        """The grader's passes no quote of which was found in the run (counted as fails)."""
        return sum(item.supported is False for item in self.expectations)

    @property
    def total(self) -> int:
        return len(self.expectations)

    @property
    def pass_rate(self) -> float:
        return 0.0 if self.error or self.skipped or not self.total else self.passed / self.total

    @property
    def time_seconds(self) -> float:
        return float(self.timing.get("executor_duration_seconds", 0.0))

    @property
    def tool_calls(self) -> int:
        return int(self.metrics.get("total_tool_calls", 0))

    def benchmark_entry(self) -> dict[str, Any]:
        """The run's ``runs[]`` item of benchmark.json."""
        return {
            "eval_id": self.key.eval_id,
            "eval_name": self.eval_name,
            "configuration": self.key.configuration,
            "run_number": self.key.run_number,
            "result": {
                "pass_rate": round(self.pass_rate, 4),
                "passed": self.passed,
                "failed": self.total - self.passed,
                "total": self.total,
                "time_seconds": round(self.time_seconds, 3),
                "tokens": self.tokens,
                "tool_calls": self.tool_calls,
                "errors": 1 if self.error else 0,
                "stop_reason": self.stop_reason,
                "unsupported": self.unsupported,
            },
            "expectations": [verdict_json(item) for item in self.expectations],
            "error": self.error.model_dump() if self.error else None,
            "skipped": self.skipped,
            "run_dir": self.key.run_dir,
            "notes": list(self.notes),
        }

    def grading(self) -> dict[str, Any]:
        """grading.json."""
        return {
            "expectations": [verdict_json(item) for item in self.expectations],
            "summary": {
                "passed": self.passed,
                "failed": self.total - self.passed,
                "total": self.total,
                "pass_rate": round(self.pass_rate, 4),
            },
            "execution_metrics": self.metrics,
            "timing": {name: self.timing[name] for name in GRADING_TIMES if name in self.timing},
            "error": self.error.model_dump() if self.error else None,
        }


def verdict_json(item: ExpectationVerdict) -> dict[str, Any]:
    """grading.json's entry of an expectation: every field, ``grader_agreement`` only with
    several gradings (``--grader-runs``)."""
    return item.model_dump(exclude={"grader_agreement"} if item.grader_agreement is None else None)


def transcript_json(
    key: RunKey,
    prompt: str,
    trajectory: Trajectory,
    error: RunErrorRecord | None,
    usage: dict[str, int],
) -> dict[str, Any]:
    """transcript.json: the messages as sent to the model plus its last answer, each tool
    call with its result, the final text."""
    messages: list[dict[str, Any]] = []
    if trajectory.requests:
        messages = list(trajectory.requests[-1].body.get("messages", []))
    if trajectory.final is not None:
        messages.append({"role": "assistant", "content": trajectory.final})
    return {
        "eval_id": key.eval_id,
        "configuration": key.configuration,
        "run_number": key.run_number,
        "prompt": prompt,
        "messages": messages,
        "tool_calls": [
            {
                "name": call.name,
                "arguments": call.arguments if call.arguments is not None else call.raw_arguments,
                "result": call.result
                if isinstance(call.result, str)
                else json.dumps(call.result, ensure_ascii=False),
            }
            for call in trajectory.calls
        ],
        "final_text": trajectory.final,
        "error": error.model_dump() if error else None,
        "usage": usage,
    }


def metrics_json(
    trajectory: Trajectory, outputs: dict[str, bytes], transcript_chars: int
) -> dict[str, Any]:
    """metrics.json: tool calls per tool, steps, files created, errors, sizes."""
    calls = trajectory.calls
    return {
        "tool_calls": dict(Counter(call.name for call in calls)),
        "total_tool_calls": len(calls),
        "total_steps": len(trajectory.turns),
        "files_created": sorted(outputs),
        "errors_encountered": sum(call.is_error for call in calls),
        "output_chars": sum(len(content) for content in outputs.values()),
        "transcript_chars": transcript_chars,
    }
