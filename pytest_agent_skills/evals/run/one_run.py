"""One eval run: the conversation, its code-checked and grader-graded expectations, its
timings; recorded beside its cassettes so that a replay gives the same result.

Each run has three files in the cassette folder: ``run-<n>.json`` (the conversation),
``run-<n>.grader.json`` (the grading) and ``run-<n>.run.json`` (the wall times as
recorded, and a failure of the endpoint the cassettes cannot replay).
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import AgentSkillsError
from ...harness.conversation import Conversation
from ...harness.errors import CassetteMissError, ModelError, NoCassetteError
from ..documents.benchmark_model import ExpectationVerdict, RunErrorRecord
from ..documents.document_io import read_document, write_data
from ..documents.run_files import RunRecordDocument
from ..setup.budget import BUDGET, TURN_LIMIT
from ..setup.eval_files import EvalCase
from .bounds import bounded_outputs, bounded_transcript
from .converse import ModelAccess, converse
from .grader import GradingError, GradingRequest, files_text, judged, transcript_text
from .grader_runs import grade_times
from .run_result import EvalRunResult, RunKey, metrics_json, transcript_json
from .transport import StoppedError


@dataclass(frozen=True)
class RunPlan:
    """One run to make: which eval, in which configuration (its skills), its number."""

    key: RunKey
    case: EvalCase
    repository: Any
    skill_dir: Path
    #: Stable names of the skill roots' paths.
    roots: Mapping[str, str]
    #: The folder of this eval's and configuration's cassettes.
    cassettes: Path
    #: Where the grader's cassettes go instead (a regrade keeps the originals apart).
    grader_cassettes: Path | None = None
    #: The eval's input files by staged name (read once: see ``spec.read_inputs``).
    inputs: Mapping[str, bytes] = field(default_factory=dict)

    def cassette(self, suffix: str) -> Path:
        return self.cassettes / f"run-{self.key.run_number}{suffix}"

    @property
    def grader_cassette(self) -> Path:
        return (self.grader_cassettes or self.cassettes) / f"run-{self.key.run_number}.grader.json"


def run_eval(access: ModelAccess, plan: RunPlan) -> EvalRunResult:
    """Make one run; every failure is recorded in the result, never raised."""
    record = _read_record(plan.cassette(".run.json"))
    replaying = access.options.record_mode == "none" or access.options.regrade
    if replaying and record.error is not None and record.error.kind == "model":
        # The endpoint failed while this run was recorded: replayed as that failure.
        return _failed(plan, record.error, _timing_of(record), record.tokens)
    inputs = dict(plan.inputs)
    prompt = plan.case.prompt
    if inputs:
        prompt += "\n\nInput files (in work/inputs/): " + ", ".join(sorted(inputs))
    started, clock = _now(), time.perf_counter()
    conversation = Conversation(
        plan.repository,
        prompt,
        cassette=plan.cassette(".json"),
        inputs=inputs,
        max_turns=access.options.max_turns,
    )
    conversed = converse(access, conversation, plan.roots)
    executor_seconds = time.perf_counter() - clock
    executor_end = _now()
    trajectory = conversed.trajectory
    paths = dict(plan.roots)
    if trajectory.workspace is not None:
        paths[str(trajectory.workspace)] = "<workspace>"
    outputs, notes = bounded_outputs(trajectory.files)
    if conversed.not_written:
        notes.append(conversed.not_written)
    transcript = transcript_text(trajectory, paths)
    error = _error(conversed.error)
    graded: dict[int, ExpectationVerdict] = {}
    grader_seconds, grader_start = 0.0, _now()
    grader_recorded = False
    grader_output: str | None = None
    if error is None:
        graded = _checked_by_code(plan.case, trajectory)
        strings = plan.case.graded
        if strings:
            clock = time.perf_counter()
            request = GradingRequest(
                tuple(strings),
                transcript,
                files_text(outputs, paths),
                plan.grader_cassette,
            )
            try:
                grading = grade_times(access, request, access.options.grader_runs)
            except AgentSkillsError as failure:
                error = _error(failure, grading=True)
                grader_recorded = True
            else:
                grader_output = grading.output
                texts = iter(grading.graded)
                for index, item in enumerate(plan.case.expectations):
                    if isinstance(item, str):
                        graded[index] = next(texts)
            grader_seconds = time.perf_counter() - clock
    expectations = tuple(
        graded.get(index) or _not_graded(item, error)
        for index, item in enumerate(plan.case.expectations)
    )
    timing = {
        "total_tokens": conversed.tokens,
        "duration_ms": round(executor_seconds * 1000),
        "total_duration_seconds": round(executor_seconds + grader_seconds, 3),
        "executor_start": started,
        "executor_end": executor_end,
        "executor_duration_seconds": round(executor_seconds, 3),
        "grader_start": grader_start,
        "grader_end": _now(),
        "grader_duration_seconds": round(grader_seconds, 3),
    }
    recorded = conversed.recorded > 0 or grader_recorded
    recorded_timing = _timing_of(record)
    if recorded_timing and (not recorded or access.options.regrade):
        timing = recorded_timing  # a replay (or a regrade): the wall times as recorded
    elif access.options.regrade:
        pass  # the run's record stays the original one's
    elif access.options.record_mode != "none" and (error is None or error.kind != "interrupted"):
        _write_record(plan.cassette(".run.json"), timing, error, conversed.tokens)
    usage = conversed.usage
    transcript_data, cut = bounded_transcript(
        transcript_json(plan.key, prompt, trajectory, error, usage)
    )
    stopped = conversed.stop_reason
    if stopped:
        # The loop's message names the scenario key; an eval's flag is another.
        hint = " An eval's turn limit is --max-turns (ini skills_eval_max_turns)."
        shown = f"stopped ({stopped}): {conversed.stop_message}"
        notes.insert(0, shown + (hint if stopped == TURN_LIMIT else ""))
    return EvalRunResult(
        key=plan.key,
        eval_name=plan.case.title,
        prompt=prompt,
        expectations=expectations,
        error=error,
        timing=timing,
        tokens=conversed.tokens,
        usage=usage,
        transcript=transcript_data,
        metrics=metrics_json(trajectory, outputs, len(transcript)),
        outputs=outputs,
        grader_output=grader_output,
        stop_reason=stopped,
        notes=(*notes, *cut),
    )


def interrupted(plan: RunPlan) -> EvalRunResult:
    """The result of a run the eval was stopped before."""
    error = RunErrorRecord(
        kind="interrupted", message="the eval was stopped (Ctrl-C) before this run finished"
    )
    return _failed(plan, error, {}, 0)


def skipped(plan: RunPlan) -> EvalRunResult:
    """The result of a run never started: the eval's token budget was spent first."""
    why = "not run: the eval's token budget (--max-tokens) was spent before this run started"
    return EvalRunResult(
        key=plan.key,
        eval_name=plan.case.title,
        prompt=plan.case.prompt,
        expectations=tuple(
            judged(_expectation_text(item), False, why) for item in plan.case.expectations
        ),
        error=None,
        timing={},
        stop_reason=BUDGET,
        skipped=True,
        notes=(why,),
    )


def crashed(plan: RunPlan, error: Exception) -> EvalRunResult:
    """The result of a run whose making raised (a bug of the harness): an error, never a pass."""
    message = f"the run failed unexpectedly: {type(error).__name__}: {error}"
    return _failed(plan, RunErrorRecord(kind="harness", message=message), {}, 0)


def _failed(
    plan: RunPlan, error: RunErrorRecord, timing: dict[str, Any], tokens: int
) -> EvalRunResult:
    """A run that failed before it could be graded: every expectation unmet."""
    return EvalRunResult(
        key=plan.key,
        eval_name=plan.case.title,
        prompt=plan.case.prompt,
        expectations=tuple(_not_graded(item, error) for item in plan.case.expectations),
        error=error,
        timing=timing,
        tokens=tokens,
    )


def _checked_by_code(case: EvalCase, trajectory: Any) -> dict[int, ExpectationVerdict]:
    from ...harness.expect import check

    graded = {}
    for index, item in enumerate(case.expectations):
        if isinstance(item, str):
            continue
        failures = check(trajectory, item)
        evidence = (
            "; ".join(f"{failure.key}: {failure.message}" for failure in failures)
            if failures
            else "checked by code: met"
        )
        graded[index] = judged(_expectation_text(item), not failures, evidence)
    return graded


def _expectation_text(item: str | Mapping[str, Any]) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)


def _not_graded(item: str | Mapping[str, Any], error: RunErrorRecord | None) -> ExpectationVerdict:
    why = f"not graded: the run failed ({error.kind}): {error.message}" if error else ""
    return judged(_expectation_text(item), False, why[:2000])


def _error(failure: BaseException | None, grading: bool = False) -> RunErrorRecord | None:
    if failure is None:
        return None
    if isinstance(failure, StoppedError):
        return RunErrorRecord(kind="interrupted", message=str(failure))
    if isinstance(failure, GradingError):
        return RunErrorRecord(kind="grading", message=str(failure))
    if isinstance(failure, ModelError) and not isinstance(
        failure, (CassetteMissError, NoCassetteError)
    ):
        return RunErrorRecord(kind="model", message=str(failure))
    message = str(failure)
    if grading and isinstance(failure, (CassetteMissError, NoCassetteError)):
        message += (
            "\nThe conversation replayed; only the grader's request changed (the string"
            " expectations, the grader model or its parameters): a regrade suffices, no re-run:"
            " `agent-skills eval SKILL_DIR --regrade --record new` (and an upstream) grades the"
            " recorded conversations again."
        )
    elif isinstance(failure, (CassetteMissError, NoCassetteError)):
        message += (
            "\nThe skill or the eval changed since the recording (or it was never recorded):"
            " re-record with `agent-skills eval SKILL_DIR --record new` (and an upstream)."
        )
    return RunErrorRecord(kind="harness", message=message)


def _read_record(path: Path) -> RunRecordDocument:
    """The run's record, empty before the run was first recorded; a record that is not one
    is refused (:class:`DocumentError`)."""
    if not path.is_file():
        return RunRecordDocument()
    return read_document(RunRecordDocument, path)


def _timing_of(record: RunRecordDocument) -> dict[str, Any]:
    """The wall times as the record has them (timing.json's fields)."""
    return record.timing.model_dump(mode="json", exclude_unset=True)


def _write_record(
    path: Path, timing: dict[str, Any], error: RunErrorRecord | None, tokens: int
) -> None:
    document = {"timing": timing, "tokens": tokens, "error": error.model_dump() if error else None}
    write_data(path, RunRecordDocument, document)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
