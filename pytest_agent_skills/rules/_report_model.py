"""The validation report (``agent-skills validate --format json``) as a typed document: what
:func:`._formats.to_json` writes, its JSON Schema shipped in the package
(``schemas/validate.schema.json``). The writer builds plain values (the report is printed on
every run, without loading pydantic); the tests check what it prints against this schema."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..typed_documents import Document, Part


class FindingEntry(Part):
    """One problem in one of the skill's files."""

    rule: str = Field(description="the rule's id (`agent-skills rule ID` documents it)")
    severity: Literal["error", "warning"]
    message: str = Field(description="what was found and how to fix it")
    line: int | None = Field(description="1-based; null when it is about the whole file")


class CommentExemption(Part):
    kind: Literal["comment"]
    line: int | None = Field(description="the line of the agent-skills comment")


class PathExemption(Part):
    kind: Literal["per-path-ignore"]
    pattern: str = Field(description="the skills_per_path_ignores pattern")


class SuppressedEntry(FindingEntry):
    """A finding an exemption silenced, and the exemption."""

    suppressed_by: CommentExemption | PathExemption


class SkillEntry(Part):
    path: str = Field(description="the skill's folder")
    name: str
    ok: bool = Field(description="no error-level finding")
    findings: list[FindingEntry]
    suppressed: list[SuppressedEntry]


class Summary(Part):
    skills: int = Field(ge=0)
    errors: int = Field(ge=0)
    warnings: int = Field(ge=0)
    suppressed: int = Field(ge=0)


class ValidationDocument(Document):
    """The findings of ``agent-skills validate`` per skill, with their summary."""

    NAME = "validate"

    skills: list[SkillEntry]
    summary: Summary
