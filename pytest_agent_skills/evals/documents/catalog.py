"""Every document evals write, by the name of its schema: ``schemas/<name>.schema.json``,
listed by ``agent-skills schema`` and printed by ``agent-skills schema NAME``."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from ...harness.cassette_document import CassetteDocument
from ...harness.coverage_document import SkillCoverageDocument
from ...rules._report_model import ValidationDocument
from ...typed_documents import Document, schema_uri
from .benchmark_model import BenchmarkDocument
from .overview import CalibrationDocument, ModelsDocument
from .run_files import (
    EvalMetadataDocument,
    GradingDocument,
    MetricsDocument,
    RunRecordDocument,
    TimingDocument,
    TranscriptDocument,
)
from .triggers import CandidatesDocument, MatrixDocument, TriggerResultsDocument

#: The shipped schemas' folder.
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"

DOCUMENTS: dict[str, type[Document]] = {
    model.NAME: model
    for model in (
        BenchmarkDocument,
        GradingDocument,
        TimingDocument,
        MetricsDocument,
        TranscriptDocument,
        EvalMetadataDocument,
        RunRecordDocument,
        TriggerResultsDocument,
        MatrixDocument,
        CandidatesDocument,
        ModelsDocument,
        CalibrationDocument,
        CassetteDocument,
        SkillCoverageDocument,
        ValidationDocument,
    )
}


def schema_of(model: type[BaseModel], name: str) -> str:
    """The JSON Schema of ``model``, the document called ``name``, as the package ships it."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_uri(name),
        **model.model_json_schema(by_alias=True, mode="serialization"),
    }
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def schema_file(name: str) -> Path:
    return SCHEMAS / f"{name}.schema.json"


def write_schemas() -> list[Path]:
    """Every document's schema written into the package (run after a model changes:
    ``python -m pytest_agent_skills.evals.documents.catalog``)."""
    written = []
    for name, model in DOCUMENTS.items():
        path = schema_file(name)
        path.write_text(schema_of(model, name), encoding="utf-8")
        written.append(path)
    return written


def published() -> dict[str, tuple[Path, str]]:
    """Every schema the package ships (the documents evals write, and the inputs: evals.json,
    triggers.json, scenarios, the audit report): name -> (file, its first line of
    description)."""
    found = {}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        text = str(schema.get("description") or schema.get("title") or "")
        found[path.name.removesuffix(".schema.json")] = (path, text.strip().split("\n")[0])
    return found


if __name__ == "__main__":
    for path in write_schemas():
        print(f"wrote {path}")
