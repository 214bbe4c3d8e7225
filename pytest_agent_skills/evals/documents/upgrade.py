"""Documents written before ``$schema`` was: each checked against its model, then given the
``$schema`` it lacks, nothing else changed (``agent-skills schema --upgrade FOLDER``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...files import write_atomic
from ...harness.cassette_document import CassetteDocument
from ...typed_documents import Document, schema_uri
from .catalog import DOCUMENTS
from .document_io import load_json, parse_document
from .run_files import RunRecordDocument
from .triggers import TriggerResultsDocument

#: The documents found by their file's name (triggers.json is also a skill's own queries).
BY_FILE_NAME = {
    "benchmark.json": "benchmark",
    "grading.json": "grading",
    "timing.json": "timing",
    "metrics.json": "metrics",
    "transcript.json": "transcript",
    "eval_metadata.json": "eval-metadata",
    "triggers-matrix.json": "triggers-matrix",
    "description-candidates.json": "description-candidates",
    "models.json": "models",
    "calibration.json": "calibration",
}


def document_model(path: Path, data: Any) -> type[Document] | None:
    """Which document ``data`` (read from ``path``) is, None for a file of none (a skill's
    evals.json, a run's output files)."""
    if not isinstance(data, dict) or "outputs" in path.parts:
        return None
    if data.get("format") == "pytest-agent-skills cassette":
        return CassetteDocument
    if path.name.endswith(".run.json"):
        return RunRecordDocument
    if path.name == "triggers.json":
        return TriggerResultsDocument if "results" in data else None
    name = BY_FILE_NAME.get(path.name)
    return DOCUMENTS[name] if name else None


def upgrade(folder: Path) -> list[Path]:
    """Every document under ``folder`` without ``$schema`` given its own (checked first:
    one that does not match its model is refused, :class:`~.document_io.DocumentError`)."""
    upgraded = []
    for path in sorted(Path(folder).rglob("*.json")):
        data = load_json(path)
        model = document_model(path, data)
        if model is None or "$schema" in data:
            continue
        parse_document(model, data, path)
        text = json.dumps({"$schema": schema_uri(model.NAME), **data}, indent=2, ensure_ascii=False)
        write_atomic(path, text + "\n")
        upgraded.append(path)
    return upgraded
