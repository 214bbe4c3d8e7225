"""Calibration: the with-skill configuration run twice (``with_skill`` and
``with_skill_repeat``), an A/A test of the skill, model and grader.

Nothing differs between the two, so every difference is noise: the share of expectation
verdicts that flip between run ``n`` of one and run ``n`` of the other, and the interval of
their delta, which should contain 0. ``calibration.json`` in the output folder keeps that
noise floor; a later benchmark written to the same folder with the same skill, models and
runs carries it as ``calibration`` and the report states it beside every delta.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..documents.benchmark_model import BenchmarkDocument, CalibrationShown, Overall
from ..documents.document_io import read_document, write_document
from ..documents.overview import CalibrationDocument, EvalFloor
from ..run.run_result import EvalRunResult
from ..verdicts import stats
from ..verdicts.benchmark import WITH_SKILL
from ..verdicts.benchmark import WITH_SKILL_REPEAT as REPEAT
from ..verdicts.evidence import is_counted, verdict_of

CALIBRATION_NAME = "calibration.json"
#: The metadata a benchmark shares with a calibration whose floor it may show.
SAME_SETTINGS = ("skill_name", "executor_model", "grader_model", "runs_per_configuration")


def _flips(runs: Sequence[EvalRunResult]) -> tuple[int, int]:
    """Expectation verdicts that differ between run n of each configuration, and pairs."""
    by_key = {
        (run.key.eval_id, run.key.configuration, run.key.run_number): run
        for run in runs
        if is_counted(run)
    }
    flipped = compared = 0
    for (eval_id, configuration, number), run in by_key.items():
        other = by_key.get((eval_id, REPEAT, number))
        if configuration != WITH_SKILL or other is None:
            continue
        theirs = {item.text: item.passed for item in other.expectations}
        for item in run.expectations:
            if item.text in theirs:
                compared += 1
                flipped += item.passed != theirs[item.text]
    return flipped, compared


def calibration_summary(
    document: BenchmarkDocument, runs: Sequence[EvalRunResult]
) -> CalibrationDocument:
    """calibration.json of an A/A benchmark: its settings, the share of expectation verdicts
    that flip, and the delta's interval over every eval and per eval."""
    flipped, compared = _flips(runs)
    share = stats.wilson(flipped, compared)
    meta, interval = document.metadata, (document.overall or Overall()).delta_ci95
    return CalibrationDocument(
        **{name: getattr(meta, name) for name in SAME_SETTINGS},
        timestamp=meta.timestamp,
        configurations=[WITH_SKILL, REPEAT],
        flipped=flipped,
        compared=compared,
        flip_share=round(flipped / compared, 4) if compared else None,
        flip_share_ci95=share.rounded() if share else None,
        delta_ci95=interval,
        verdict=verdict_of(stats.Interval(*interval) if interval else None),
        evals={
            str(verdict.eval_id): EvalFloor(delta_ci95=verdict.delta_ci95, verdict=verdict.verdict)
            for verdict in document.evals
        },
    )


#: What a benchmark carries of a calibration (``calibration`` in benchmark.json).
SHOWN = ("timestamp", "flipped", "compared", "flip_share", "flip_share_ci95", "delta_ci95")


def write_calibration(
    out_dir: Path, document: BenchmarkDocument, runs: Sequence[EvalRunResult]
) -> BenchmarkDocument:
    """calibration.json of an A/A benchmark, and the benchmark with its noise floor."""
    calibration = calibration_summary(document, runs)
    write_document(Path(out_dir) / CALIBRATION_NAME, calibration)
    return with_floor(document, calibration)


def attach_calibration(out_dir: Path, document: BenchmarkDocument) -> BenchmarkDocument:
    """``document`` with the noise floor of ``out_dir``'s calibration.json when it was
    measured with the same skill, models and runs (as it is otherwise)."""
    path = Path(out_dir) / CALIBRATION_NAME
    if not path.is_file():
        return document
    calibration = read_document(CalibrationDocument, path)
    meta = document.metadata
    if REPEAT in (meta.configurations or ()):
        return document
    if any(getattr(calibration, name) != getattr(meta, name) for name in SAME_SETTINGS):
        return document
    return with_floor(document, calibration)


def with_floor(document: BenchmarkDocument, calibration: CalibrationDocument) -> BenchmarkDocument:
    """``document`` carrying the noise floor of ``calibration``: as ``calibration``, each
    eval's as ``evals[i].noise_floor_ci95``."""
    shown = calibration.model_dump(include=set(SHOWN), exclude_unset=True)
    evals = []
    for verdict in document.evals:
        floor = calibration.evals.get(str(verdict.eval_id))
        interval = floor.delta_ci95 if floor else None
        evals.append(verdict.model_copy(update={"noise_floor_ci95": interval}))
    carried = CalibrationShown(**{name: shown.get(name) for name in SHOWN})
    return document.model_copy(update={"calibration": carried, "evals": evals})
