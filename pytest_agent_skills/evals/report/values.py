"""What the report renders of an eval output folder (read by :mod:`.folder`): the documents
as their models read them (:mod:`..documents`), and what a run's folder adds to its
``runs[]`` entry (its transcript and output files)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...typed_documents import Interval
from ..documents.benchmark_model import (
    BenchmarkDocument,
    ConfigurationSummary,
    EvalVerdict,
    ExpectationVerdict,
    RunEntry,
    RunErrorRecord,
    RunFigures,
)
from ..documents.overview import ModelsDocument
from ..documents.triggers import CandidatesDocument, MatrixDocument, TriggerResultsDocument


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # as the model sent them (JSON text, pretty-printed when it parses)
    result: str | None  # the tool message's content; None when no result was recorded


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Transcript:
    """transcript.json as the page shows it: each tool call beside its result."""

    prompt: str
    messages: tuple[Message, ...]
    final_text: str
    error: RunErrorRecord | None


@dataclass(frozen=True)
class OutputFile:
    path: str  # relative to the run's outputs/, with "/"
    size: int
    kind: str  # "text", "binary", "symlink", "over-budget"
    text: str = ""  # shown content (text files), at most OUTPUT_TEXT_LIMIT characters
    truncated: bool = False


@dataclass(frozen=True)
class Run:
    """A ``runs[]`` entry of benchmark.json with what its run folder holds."""

    entry: RunEntry
    eval_name: str  # the entry's, else "eval <id>"
    run_dir: str  # the entry's, else eval-<id>/<configuration>/run-<n>
    error: RunErrorRecord | None  # the entry's, else its transcript's
    expectations: tuple[ExpectationVerdict, ...]  # the entry's, else its grading.json's
    found: bool  # the run folder exists
    transcript: Transcript | None
    outputs: tuple[OutputFile, ...]
    outputs_omitted: int  # files past OUTPUT_FILES_LIMIT

    @property
    def eval_id(self) -> int:
        return self.entry.eval_id

    @property
    def configuration(self) -> str:
        return self.entry.configuration

    @property
    def run_number(self) -> int:
        return self.entry.run_number

    @property
    def result(self) -> RunFigures:
        return self.entry.result

    @property
    def is_error(self) -> bool:
        return self.error is not None or self.result.errors > 0

    @property
    def outcome(self) -> str:
        """``skipped`` (never started: the eval's token budget was spent), ``error`` (never
        a pass, whatever was graded), ``pass`` (every expectation met) or ``fail``."""
        if self.entry.skipped:
            return "skipped"
        if self.is_error:
            return "error"
        return "pass" if self.result.total and self.result.passed == self.result.total else "fail"

    @property
    def counted_pass_rate(self) -> float:
        """The pass rate the summaries use: an errored run is never a pass."""
        return 0.0 if self.is_error else self.result.pass_rate


@dataclass(frozen=True)
class Benchmark:
    """benchmark.json with each run's folder."""

    document: BenchmarkDocument
    runs: tuple[Run, ...]

    @property
    def metadata(self) -> dict[str, str]:
        """``metadata`` as the page lists it: each value as text, JSON where it is not."""
        fields = self.document.metadata.model_dump(mode="json", exclude_unset=True)
        return {
            key: value if isinstance(value, str) else json.dumps(value)
            for key, value in fields.items()
        }

    @property
    def summary(self) -> dict[str, ConfigurationSummary]:
        """``run_summary`` per configuration, in the file's order (``delta`` left out)."""
        return {
            name: part
            for name, part in self.document.run_summary.items()
            if name != "delta" and isinstance(part, ConfigurationSummary)
        }

    @property
    def evidence(self) -> dict[int, EvalVerdict]:
        """``evals[]`` by eval id (none in a benchmark written before them)."""
        return {verdict.eval_id: verdict for verdict in self.document.evals}

    @property
    def floor(self) -> Interval | None:
        """The A/A noise floor: with_skill against its repeat (calibration.json's delta)."""
        return self.document.calibration.delta_ci95 if self.document.calibration else None


@dataclass(frozen=True)
class ReportFolder:
    path: Path
    benchmark: Benchmark | None
    triggers: TriggerResultsDocument | None
    matrix: MatrixDocument | None = None
    candidates: CandidatesDocument | None = None
    models: ModelsDocument | None = None
