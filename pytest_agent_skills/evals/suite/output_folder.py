"""The eval output folder: benchmark.json, benchmark.md, each eval's eval_metadata.json, and
each run's grading.json, timing.json, metrics.json, transcript.json and outputs/ (then
report.html, :mod:`..report.write`'s).

Each file is written whole or not at all (a temporary file renamed over it); a run's
folder is replaced as a whole, so no file of an earlier run survives in it.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ...files import write_atomic
from ..documents.benchmark_model import BenchmarkDocument
from ..documents.document_io import write_data, write_document
from ..documents.run_files import (
    EvalMetadataDocument,
    GradingDocument,
    MetricsDocument,
    TimingDocument,
    TranscriptDocument,
)
from ..run.run_result import EvalRunResult
from ..verdicts.benchmark_md import benchmark_markdown

if TYPE_CHECKING:
    from ..setup.eval_files import EvalCase


def write_benchmark(
    out_dir: Path,
    document: BenchmarkDocument,
    runs: Sequence[EvalRunResult],
    evals: Sequence[EvalCase] = (),
) -> None:
    """benchmark.json, benchmark.md, every run's folder and every eval's
    ``eval-<id>/eval_metadata.json`` (and a copy in each configuration's folder, where
    skill-creator's viewer finds it for a run) under ``out_dir``."""
    for run in runs:
        if not run.skipped:  # a run never started has nothing to show
            write_run(out_dir / run.key.run_dir, run)
    for case in evals:
        # skill-creator's eval_metadata.json, whose viewer reads the prompt from it: the
        # eval's id, name, prompt and expectations as its evals.json has them.
        metadata = EvalMetadataDocument(
            eval_id=case.id,
            eval_name=case.title,
            prompt=case.prompt,
            assertions=list(case.expectations),
        )
        folder = out_dir / f"eval-{case.id}"
        write_document(folder / "eval_metadata.json", metadata)
        # skill-creator's viewer takes a folder with outputs/ for a run and looks for the file
        # there and one folder up: ours are a level deeper (eval-<id>/<configuration>/run-<n>).
        for configuration in document.metadata.configurations or ():
            write_document(folder / configuration / "eval_metadata.json", metadata)
    write_document(out_dir / "benchmark.json", document)
    write_atomic(out_dir / "benchmark.md", benchmark_markdown(document))


def write_run(folder: Path, run: EvalRunResult) -> None:
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    write_data(folder / "grading.json", GradingDocument, run.grading())
    write_data(folder / "timing.json", TimingDocument, run.timing)
    write_data(folder / "metrics.json", MetricsDocument, run.metrics)
    write_data(folder / "transcript.json", TranscriptDocument, run.transcript)
    outputs = folder / "outputs"
    outputs.mkdir()
    for name, content in run.outputs.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts:
            continue  # never outside the run's folder (captured files have plain names)
        (outputs / relative).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(outputs / relative, content)
