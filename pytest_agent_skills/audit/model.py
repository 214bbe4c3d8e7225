"""The audit document (``agent-skills audit --format json``): one typed model, whose JSON
Schema ships in the package (``schemas/audit.schema.json``).

    {"version": 1,
     "skills": [{"name", "path", "findings": [{"rule", "severity", "analysis", "file", "line",
                                               "message", "evidence"}],
                 "not_analyzed": [{"file", "reason"}]}],
     "summary": {"skills", "findings": {severity: count}, "dynamic_runs", "seconds"}}

Every reader and writer of the document goes through these classes: the JSON output is
``AuditDocument.model_dump_json``, the text, SARIF and GitHub outputs render from the same
value.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from ..typed_documents import Part, schema_field
from .severity import SEVERITIES, Severity

#: The document's version: a change that breaks a reader makes a new one.
AUDIT_VERSION: Literal[1] = 1

Analysis = Literal["static", "dynamic"]


class AuditFinding(Part):
    """One thing the audit found in one file of a skill."""

    rule: str = Field(description="the rule id ('agent-skills rule ID' documents it)")
    severity: Severity = Field(description="how much harm it can do, and how surely it is meant")
    analysis: Analysis = Field(
        description="static: read from the files; dynamic: seen in a detonation run"
    )
    file: str = Field(description="the file, relative to the skill folder")
    line: int | None = Field(
        ge=1, description="1-based line; null when about the whole file or run"
    )
    message: str = Field(description="what was found, and why it matters")
    evidence: str = Field(
        description="the offending text (invisible and control characters written escaped,"
        " as \\u200b); empty when there is none to show"
    )


class NotAnalyzed(Part):
    """Content the audit did not look into: 'no findings' says nothing about it."""

    file: str = Field(description="the file (or run), relative to the skill folder")
    reason: str = Field(description="why it was not analysed")


class SkillAudit(Part):
    """The audit of one skill."""

    name: str = Field(description="the skill's name (its folder's when SKILL.md declares none)")
    path: str = Field(description="the skill folder, as the command was given it")
    findings: list[AuditFinding] = Field(default_factory=list)
    not_analyzed: list[NotAnalyzed] = Field(default_factory=list)


class AuditSummary(Part):
    """Totals of a run."""

    skills: int = Field(ge=0, description="skills audited")
    findings: dict[Severity, int] = Field(
        description="findings per severity, every severity present (0 when none)"
    )
    dynamic_runs: int = Field(ge=0, description="commands run in detonation runs")
    seconds: float = Field(ge=0, description="wall time of the audit")


class AuditDocument(Part):
    """What ``agent-skills audit --format json`` writes."""

    model_config = ConfigDict(populate_by_name=True, title="agent-skills audit report")

    schema_: str = schema_field("audit")
    version: Literal[1] = AUDIT_VERSION
    skills: list[SkillAudit]
    summary: AuditSummary


def summarize(skills: list[SkillAudit], dynamic_runs: int, seconds: float) -> AuditSummary:
    """The summary of ``skills``: every severity counted, 0 when none."""
    counts: dict[Severity, int] = dict.fromkeys(SEVERITIES, 0)
    for skill in skills:
        for finding in skill.findings:
            counts[finding.severity] += 1
    return AuditSummary(
        skills=len(skills), findings=counts, dynamic_runs=dynamic_runs, seconds=round(seconds, 3)
    )
