"""Validation reports as text, JSON and SARIF 2.1.0 (for GitHub code scanning)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..findings import Finding, Severity
from ._catalogue import RULES
from ._validate import SkillReport

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "agent-skills"


def summary(reports: Sequence[SkillReport]) -> dict[str, int]:
    findings = [finding for report in reports for finding in report.findings]
    return {
        "skills": len(reports),
        "errors": sum(finding.severity is Severity.ERROR for finding in findings),
        "warnings": sum(finding.severity is Severity.WARNING for finding in findings),
    }


def to_text(reports: Sequence[SkillReport]) -> str:
    lines = [
        finding.format()
        for report in reports
        for finding in sorted(report.findings, key=lambda finding: finding.line or 0)
    ]
    counts = summary(reports)
    failed = sum(not report.ok for report in reports)
    lines.append(
        f"{counts['skills']} skill(s) checked: {counts['errors']} error(s),"
        f" {counts['warnings']} warning(s); {failed} skill(s) failed"
    )
    return "\n".join(lines) + "\n"


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "severity": str(finding.severity),
        "message": finding.message,
        "line": finding.line,
    }


def to_json(reports: Sequence[SkillReport]) -> str:
    document = {
        "skills": [
            {
                "path": str(report.skill.directory),
                "name": report.skill.name,
                "ok": report.ok,
                "findings": [_finding_json(finding) for finding in report.findings],
            }
            for report in reports
        ],
        "summary": summary(reports),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _artifact_uri(path: Path, base: Path) -> dict[str, str]:
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(base)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": relative.as_posix(), "uriBaseId": "%SRCROOT%"}


def to_sarif(reports: Sequence[SkillReport], base: Path | None = None) -> str:
    """SARIF 2.1.0; file URIs are relative to ``base`` (default: the current folder)."""
    base = Path(os.path.abspath(base or Path.cwd()))
    rule_index = {rule_id: index for index, rule_id in enumerate(RULES)}
    rules = [
        {
            "id": rule.id,
            "name": rule.id,
            "shortDescription": {"text": rule.summary},
            "defaultConfiguration": {"level": str(rule.severity)},
            "properties": {"check": rule.check, "source": rule.source},
        }
        for rule in RULES.values()
    ]
    results = []
    for report in reports:
        for finding in report.findings:
            location: dict[str, Any] = {"artifactLocation": _artifact_uri(finding.path, base)}
            if finding.line:
                location["region"] = {"startLine": finding.line}
            results.append(
                {
                    "ruleId": finding.rule,
                    "ruleIndex": rule_index[finding.rule],
                    "level": str(finding.severity),
                    "message": {"text": finding.message},
                    "locations": [{"physicalLocation": location}],
                    "properties": {"skill": report.skill.name},
                }
            )
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": TOOL_NAME, "version": __version__, "rules": rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


FORMATTERS = {"text": to_text, "json": to_json, "sarif": to_sarif}
