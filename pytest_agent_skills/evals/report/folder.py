"""Reading an eval output folder for the report.

The folder is the one docs/evals.md describes: ``benchmark.json`` with its run folders
(``eval-<id>/<configuration>/run-<n>/`` holding ``grading.json``, ``transcript.json`` and
``outputs/``), ``triggers.json``, ``triggers-matrix.json``, ``description-candidates.json``
and/or ``models.json``. Each file is read through the model its writer uses
(:mod:`..documents`): one that does not match is a :class:`DocumentError` naming the file,
the JSON path, what was expected and what was found (the line, for JSON syntax). A run folder
or transcript that is absent is shown as absent, since an interrupted run may leave none.
"""

from __future__ import annotations

from pathlib import Path

from ..documents.benchmark_model import BenchmarkDocument
from ..documents.document_io import DocumentError, read_document
from ..documents.overview import ModelsDocument
from ..documents.triggers import CandidatesDocument, MatrixDocument, TriggerResultsDocument
from .run_reader import OUTPUT_TEXT_LIMIT as OUTPUT_TEXT_LIMIT  # the report's limits, in one place
from .run_reader import Budget, read_run
from .values import Benchmark, ReportFolder, Run

OUTPUTS_BUDGET = 2_000_000  # characters of output files inlined in the whole page
MATRIX_FILE = "triggers-matrix.json"
CANDIDATES_FILE = "description-candidates.json"
MODELS_FILE = "models.json"


def read_folder(out_dir: Path) -> ReportFolder:
    """Everything the report shows, read from ``out_dir``; :class:`DocumentError` if it
    cannot be."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise DocumentError(out_dir, None, "is not a folder (the eval output folder, --out)")
    names = ("benchmark.json", "triggers.json", MATRIX_FILE, CANDIDATES_FILE, MODELS_FILE)
    benchmark, triggers, matrix, candidates, models = (out_dir / name for name in names)
    if not any(out_dir.joinpath(name).exists() for name in names):
        raise DocumentError(
            out_dir,
            None,
            "holds neither benchmark.json nor triggers.json: run `agent-skills eval` "
            "with --out pointing here first",
        )
    return ReportFolder(
        out_dir,
        _read_benchmark(out_dir, benchmark) if benchmark.exists() else None,
        read_document(TriggerResultsDocument, triggers) if triggers.exists() else None,
        _read_matrix(matrix) if matrix.exists() else None,
        read_document(CandidatesDocument, candidates) if candidates.exists() else None,
        _read_models(models) if models.exists() else None,
    )


def _read_models(path: Path) -> ModelsDocument:
    """models.json, each model's folder a plain name below it (the page links to it)."""
    document = read_document(ModelsDocument, path)
    for model in document.models:
        folder = document.folders.get(model, "")
        if not folder or "/" in folder or folder.startswith("."):
            raise DocumentError(path, None, f"folders: no plain folder name for model {model!r}")
    return document


def _read_benchmark(out_dir: Path, path: Path) -> Benchmark:
    document = read_document(BenchmarkDocument, path)
    budget = Budget(OUTPUTS_BUDGET)
    runs: list[Run] = []
    seen: dict[tuple[int, str, int], str] = {}
    for index, entry in enumerate(document.runs):
        where = f"runs[{index}]"
        key = (entry.eval_id, entry.configuration, entry.run_number)
        if key in seen:
            raise DocumentError(
                path,
                None,
                f"{where}: eval {entry.eval_id} {entry.configuration} run {entry.run_number}"
                f" is listed twice (first at {seen[key]})",
            )
        seen[key] = where
        runs.append(read_run(out_dir, entry, where, budget))
    return Benchmark(document, tuple(runs))


def _read_matrix(path: Path) -> MatrixDocument:
    """triggers-matrix.json; a file written before ``own_false_triggers`` listed a skill's
    own should-not queries that loaded it as false triggers "to" itself: moved there."""
    document = read_document(MatrixDocument, path)
    scores = {}
    for name, score in document.per_skill.items():
        went = dict(score.false_triggers)
        own = score.own_false_triggers + went.pop(name, 0)
        scores[name] = score.model_copy(update={"false_triggers": went, "own_false_triggers": own})
    return document.model_copy(update={"per_skill": scores})
