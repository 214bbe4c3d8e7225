"""Eval output folders written by hand, as the eval runner writes them (docs/evals.md).

The report's tests render these instead of running evals, so they pin the page against the
folder contract alone. A case says, per configuration, how each run went: how many of its
expectations passed (the first ones pass), or that it errored. The transcripts are those of a
csv-stats skill: the agent loads the skill, runs its script and answers, or (without the skill)
guesses.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


@dataclass(frozen=True)
class Errored:
    """A run that errored: its kind (model, grading, harness, interrupted) and message."""

    kind: str
    message: str


Outcome = int | Errored  # expectations passed (the first ones), or an error


@dataclass(frozen=True)
class EvalCase:
    eval_id: int
    name: str
    prompt: str
    expectations: tuple[str, ...]
    outcomes: dict[str, tuple[Outcome, ...]]  # configuration -> one outcome per run
    final_text: str = "The mean of the value column is 4.2 (computed by scripts/stats.py)."
    tool_result: str = ""  # replaces skill_run's result when set
    outputs: dict[str, bytes] = field(default_factory=dict)  # replaces the default out/ files


@dataclass(frozen=True)
class TriggerCase:
    query: str
    should_trigger: bool
    triggers: int
    runs: int
    errors: tuple[str, ...] = ()  # the messages of the runs that errored


MEAN_EVAL = EvalCase(
    1,
    "mean of a column",
    "What is the mean of the value column in data.csv?",
    (
        "The answer gives the mean the script computed",
        "The skill's stats script was run on inputs/data.csv",
        "out/stats.json exists",
    ),
    {
        "with_skill": (3, 3, 2),
        "without_skill": (1, 0, Errored("model", "upstream answered 503 three times")),
    },
)
SUMMARY_EVAL = EvalCase(
    2,
    "summary file",
    "Write a summary of data.csv to out/summary.md with min, max and mean.",
    ("out/summary.md lists min, max and mean", "The numbers match the data"),
    {"with_skill": (2, 2, 2), "without_skill": (2, 1, 1)},
)
TRIGGERS = (
    TriggerCase("what's the average of the price column in sales.csv", True, 3, 3),
    TriggerCase("compute summary statistics for measurements.csv", True, 1, 3),
    TriggerCase("write a haiku about spreadsheets", False, 0, 3),
    TriggerCase("convert this csv to json", False, 2, 3),
    TriggerCase("total the invoices in q3.csv", True, 2, 3, ("upstream answered 429 four times",)),
)


def hostile_case(text: str) -> EvalCase:
    """A case with ``text`` (markup meant to break the page) in every field a model, a skill
    or a user supplies: names, prompt, expectation, final answer, tool result, output file."""
    return EvalCase(
        1,
        f"name {text}",
        f"prompt {text}",
        (f"expectation {text}",),
        {"with_skill": (0,), "without_skill": (1,)},
        final_text=f"final {text}",
        tool_result=f"result {text}",
        outputs={"page.html": f"file {text}".encode()},
    )


def random_case(eval_id: int, configurations: Sequence[str], runs: int, seed: int) -> EvalCase:
    """A case with seeded random outcomes: each configuration its own chance of success."""
    rng = random.Random(seed)
    expectations = (
        "The answer gives the mean the script computed",
        "The skill's stats script was run",
        "out/stats.json exists",
        "The answer names the column",
    )
    outcomes: dict[str, tuple[Outcome, ...]] = {}
    for index, name in enumerate(configurations):
        chance = (0.9, 0.45, 0.7, 0.5)[index % 4]
        row: list[Outcome] = []
        for run in range(runs):
            if rng.random() < 0.04:
                row.append(Errored("grading", f"the grader's answer was not JSON (run {run + 1})"))
            else:
                row.append(sum(rng.random() < chance for _ in expectations))
        outcomes[name] = tuple(row)
    return EvalCase(
        eval_id,
        f"generated eval {eval_id}",
        f"Question {eval_id} about data.csv?",
        expectations,
        outcomes,
    )


def _transcript(
    case: EvalCase, configuration: str, run_number: int, error: Errored | None
) -> dict[str, Any]:
    uses_skill = configuration != "without_skill"
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You can use skills.\n\nAvailable skills:\n"
            "- csv-stats: statistics of CSV columns\n- pdf-tools: read PDF files",
        },
        {"role": "user", "content": case.prompt},
    ]
    calls: list[dict[str, Any]] = []

    def call(name: str, arguments: dict[str, Any], result: str) -> None:
        call_id = f"call_{len(calls) + 1}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        calls.append({"name": name, "arguments": arguments, "result": result})

    if uses_skill:
        call(
            "skill_load",
            {"skill": "csv-stats"},
            json.dumps({"loaded": "csv-stats", "body": "Run scripts/stats.py FILE --column NAME"}),
        )
        result = case.tool_result or json.dumps(
            {
                "stdout": '{"column": "value", "mean": 4.2, "min": 1.0, "max": 9.5}\n',
                "stderr": "",
                "exit_code": 0,
                "output_files": ["out/stats.json"],
            }
        )
        call(
            "skill_run",
            {
                "skill": "csv-stats",
                "command": "python3 scripts/stats.py inputs/data.csv --column value",
            },
            result,
        )
    else:
        call("skill_list", {}, json.dumps({"skills": ["pdf-tools"]}))
    final_text = (
        "" if error else (case.final_text if uses_skill else "I estimate the mean is about 5.")
    )
    if final_text:
        messages.append({"role": "assistant", "content": final_text})
    return {
        "eval_id": case.eval_id,
        "configuration": configuration,
        "run_number": run_number,
        "prompt": case.prompt,
        "messages": messages,
        "tool_calls": calls,
        "final_text": final_text,
        "error": None if error is None else {"kind": error.kind, "message": error.message},
        "usage": {
            "prompt_tokens": 900 + 40 * run_number,
            "completion_tokens": 120,
            "total_tokens": 1020 + 40 * run_number,
        },
    }


def _evidence(text: str, passed: bool, configuration: str) -> str:
    if passed:
        return f"Transcript shows it: {text.lower()}."
    if configuration == "without_skill":
        return "The answer says 'about 5' but the data's mean is 4.2; no script was run."
    return "skill_run printed mean 4.2 but the final answer gives 4.0."


def _outputs(case: EvalCase, configuration: str) -> dict[str, bytes]:
    if case.outputs:
        return case.outputs
    if configuration == "without_skill":
        return {}
    return {
        "stats.json": b'{"column": "value", "mean": 4.2, "min": 1.0, "max": 9.5}\n',
        "plots/histogram.png": PNG_BYTES,
    }


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "mean": round(statistics.fmean(values), 4),
        "stddev": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def _run(
    out_dir: Path, case: EvalCase, configuration: str, run_number: int, outcome: Outcome
) -> dict[str, Any]:
    error = outcome if isinstance(outcome, Errored) else None
    passed = outcome if isinstance(outcome, int) else 0
    total = len(case.expectations)
    graded = error is None or error.kind not in ("grading", "model", "interrupted")
    expectations = (
        [
            {
                "text": text,
                "passed": index < passed,
                "evidence": _evidence(text, index < passed, configuration),
            }
            for index, text in enumerate(case.expectations)
        ]
        if graded
        else []
    )
    run_dir = f"eval-{case.eval_id}/{configuration}/run-{run_number}"
    folder = out_dir / run_dir
    transcript = _transcript(case, configuration, run_number, error)
    tokens = transcript["usage"]["total_tokens"]
    seconds = round(8.0 + 1.5 * run_number + (4.0 if configuration == "with_skill" else 0.0), 1)
    _write_json(folder / "transcript.json", transcript)
    _write_json(
        folder / "grading.json",
        {
            "expectations": expectations,
            "summary": {
                "passed": passed,
                "failed": total - passed,
                "total": total,
                "pass_rate": 0.0 if error else round(passed / total, 4),
            },
        },
    )
    _write_json(
        folder / "timing.json",
        {
            "total_tokens": tokens,
            "duration_ms": int(seconds * 1000),
            "total_duration_seconds": seconds,
        },
    )
    outputs = _outputs(case, configuration)
    _write_json(
        folder / "metrics.json",
        {
            "tool_calls": {call["name"]: 1 for call in transcript["tool_calls"]},
            "total_tool_calls": len(transcript["tool_calls"]),
            "total_steps": len(transcript["tool_calls"]) + 1,
            "files_created": sorted(outputs),
            "errors_encountered": 1 if error else 0,
            "output_chars": sum(len(data) for data in outputs.values()),
            "transcript_chars": len(json.dumps(transcript)),
        },
    )
    (folder / "outputs").mkdir(parents=True, exist_ok=True)
    for name, data in outputs.items():
        (folder / "outputs" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "outputs" / name).write_bytes(data)
    return {
        "eval_id": case.eval_id,
        "eval_name": case.name,
        "configuration": configuration,
        "run_number": run_number,
        "result": {
            "pass_rate": 0.0 if error else round(passed / total, 4),
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "time_seconds": seconds,
            "tokens": tokens,
            "tool_calls": len(transcript["tool_calls"]),
            "errors": 1 if error else 0,
        },
        "expectations": expectations,
        "notes": [],
        "error": None if error is None else {"kind": error.kind, "message": error.message},
        "run_dir": run_dir,
    }


def write_benchmark(
    out_dir: Path, cases: Sequence[EvalCase], skill_name: str = "csv-stats"
) -> dict[str, Any]:
    """benchmark.json, benchmark.md and every run folder of ``cases``; returns the benchmark."""
    configurations: list[str] = []
    for case in cases:
        configurations += [name for name in case.outcomes if name not in configurations]
    runs = [
        _run(out_dir, case, configuration, number, outcome)
        for case in cases
        for configuration, outcomes in case.outcomes.items()
        for number, outcome in enumerate(outcomes, start=1)
    ]
    summary: dict[str, Any] = {}
    for name in configurations:
        mine = [run["result"] for run in runs if run["configuration"] == name]
        summary[name] = {
            metric: _summary([float(result[metric]) for result in mine])
            for metric in ("pass_rate", "time_seconds", "tokens")
        }
    if len(configurations) > 1:
        first, second = summary[configurations[0]], summary[configurations[1]]
        difference = {key: first[key]["mean"] - second[key]["mean"] for key in first}
        summary["delta"] = {
            "pass_rate": f"{difference['pass_rate']:+.2f}",
            "time_seconds": f"{difference['time_seconds']:+.1f}",
            "tokens": f"{difference['tokens']:+.0f}",
        }
    benchmark = {
        "metadata": {
            "skill_name": skill_name,
            "skill_path": f"skills/{skill_name}",
            "executor_model": "qwen2.5-7b-instruct",
            "grader_model": "qwen2.5-7b-instruct",
            "timestamp": "2026-12-04T20:00:00Z",
            "evals_run": [case.eval_id for case in cases],
            "runs_per_configuration": max(len(o) for case in cases for o in case.outcomes.values()),
        },
        "runs": runs,
        "run_summary": summary,
        "notes": ["Without the skill the model guesses the mean instead of computing it."],
    }
    _write_json(out_dir / "benchmark.json", benchmark)
    lines = ["| eval | configuration | run | pass rate |", "|---|---|---|---|"]
    lines += [
        f"| {run['eval_id']} | {run['configuration']} | {run['run_number']} "
        f"| {run['result']['pass_rate']:.2f} |"
        for run in runs
    ]
    (out_dir / "benchmark.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return benchmark


def write_triggers(
    out_dir: Path, cases: Sequence[TriggerCase] = TRIGGERS, threshold: float = 0.5
) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    for case in cases:
        rate = case.triggers / case.runs
        meets = rate >= threshold if case.should_trigger else rate < threshold
        results.append(
            {
                "query": case.query,
                "should_trigger": case.should_trigger,
                "trigger_rate": round(rate, 4),
                "triggers": case.triggers,
                "runs": case.runs,
                "errors": len(case.errors),
                "error_messages": list(case.errors),
                "pass": meets and not case.errors,
            }
        )
    passed_count = sum(result["pass"] for result in results)
    triggers = {
        "skill_name": "csv-stats",
        "model": "qwen2.5-7b-instruct",
        "threshold": threshold,
        "description": "Statistics of CSV columns: mean, min, max. "
        "Use when asked about numbers in a .csv file.",
        "results": results,
        "summary": {
            "total": len(results),
            "passed": passed_count,
            "failed": len(results) - passed_count,
        },
    }
    _write_json(out_dir / "triggers.json", triggers)
    return triggers
