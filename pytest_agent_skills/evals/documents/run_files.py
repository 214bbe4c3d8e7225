"""The files of one run: skill-creator's grading.json, timing.json, metrics.json,
transcript.json and eval_metadata.json in the output folder, and the run's record beside its
cassettes (``run-<n>.run.json``: its timings, tokens and error, so a replay gives the same
result)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ...typed_documents import Document, Open, Part
from .benchmark_model import ExpectationVerdict, RunErrorRecord


class GradingSummary(Part):
    passed: int
    failed: int
    total: int
    pass_rate: float


class Timing(Open):
    """timing.json: the run's wall times (skill-creator's names)."""

    total_tokens: int | None = None
    duration_ms: int | None = None
    total_duration_seconds: float | None = None
    executor_start: str | None = None
    executor_end: str | None = None
    executor_duration_seconds: float | None = None
    grader_start: str | None = None
    grader_end: str | None = None
    grader_duration_seconds: float | None = None


class TimingDocument(Document, Timing):
    """timing.json of a run folder."""

    NAME = "timing"


class Metrics(Open):
    """metrics.json: tool calls per tool, steps, files created, errors, sizes."""

    tool_calls: dict[str, int] | None = None
    total_tool_calls: int | None = None
    total_steps: int | None = None
    files_created: list[str] | None = None
    errors_encountered: int | None = None
    output_chars: int | None = None
    transcript_chars: int | None = None


class MetricsDocument(Document, Metrics):
    """metrics.json of a run folder."""

    NAME = "metrics"


class GradingDocument(Document):
    """grading.json of a run folder (skill-creator's, which its viewer reads)."""

    NAME = "grading"

    expectations: list[ExpectationVerdict] = Field(default_factory=list)
    summary: GradingSummary | None = None
    execution_metrics: Metrics | None = None
    timing: Timing | None = None
    error: RunErrorRecord | None = None


class CallRecord(Part):
    """A tool call with its result, as transcript.json pairs them."""

    name: str
    arguments: Any = None
    result: Any = None


class TranscriptDocument(Document):
    """transcript.json: the messages as sent to the model (OpenAI's chat format, kept as
    sent) plus its last answer, each tool call with its result, the final text."""

    NAME = "transcript"

    eval_id: int | None = None
    configuration: str | None = None
    run_number: int | None = None
    prompt: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: list[CallRecord] = Field(default_factory=list)
    final_text: str | None = None
    error: RunErrorRecord | None = None
    usage: dict[str, int] | None = None


class EvalMetadataDocument(Document):
    """eval_metadata.json: the eval as its evals.json has it (skill-creator's viewer reads
    the prompt from it)."""

    NAME = "eval-metadata"

    eval_id: int
    eval_name: str
    prompt: str
    assertions: list[Any] = Field(description="the eval's expectations, strings and objects")


class RunRecordDocument(Document):
    """``run-<n>.run.json`` beside a run's cassettes: its timings, tokens and error."""

    NAME = "run-record"

    timing: Timing = Field(default_factory=Timing)
    tokens: int = 0
    error: RunErrorRecord | None = None
