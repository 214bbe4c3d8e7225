"""The audit report as text, JSON (the :class:`~.model.AuditDocument`), SARIF 2.1.0 and
GitHub workflow annotations; SARIF and annotations through the writers ``validate`` uses
(:mod:`pytest_agent_skills.codescan`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..codescan import Annotation, absolute_base, sarif_location, sarif_log
from ..filenames import printable
from .catalogue import AUDIT_RULES
from .model import AuditFinding, SkillAudit
from .run import AuditRun
from .severity import SEVERITIES, Severity

#: What a clean report says beside its counts: the rules know patterns, not intent.
NOT_SAFE = (
    "no findings is not a verdict of safe: the static rules see known patterns in the files"
    " read; a payload built at run time, fetched later or hidden in what was not analysed"
    " passes them (--dynamic runs the skill in the sandbox)"
)
#: SARIF levels and GitHub's security-severity scores (0-10) of each severity.
_LEVELS: dict[Severity, str] = {
    "critical": "error",
    "high": "error",
    "medium": "warning",
    "low": "note",
    "info": "note",
}
_SCORES: dict[Severity, str] = {
    "critical": "9.5",
    "high": "8.0",
    "medium": "5.5",
    "low": "3.0",
    "info": "0.0",
}


def _location(skill: SkillAudit, finding: AuditFinding) -> str:
    place = f"{skill.path}/{finding.file}"
    return f"{place}:{finding.line}" if finding.line else place


def to_text(run: AuditRun, base: Path | None = None) -> str:
    del base
    document = run.document
    lines: list[str] = []
    for skill in document.skills:
        for finding in skill.findings:
            lines.append(
                f"{_location(skill, finding)}: {finding.severity} [{finding.rule}]"
                f" {finding.message}"
            )
            if finding.evidence:
                lines.append(f"    {finding.evidence}")
        for item in skill.not_analyzed:
            lines.append(f"{skill.path}/{item.file}: not analysed: {item.reason}")
    counts = document.summary.findings
    found = ", ".join(f"{counts[level]} {level}" for level in SEVERITIES if counts[level])
    skipped = sum(len(skill.not_analyzed) for skill in document.skills)
    parts = [f"{document.summary.skills} skill(s) audited: {found or 'no findings'}"]
    if skipped:
        parts.append(f"{skipped} file(s) not analysed")
    if run.suppressed:
        parts.append(f"{len(run.suppressed)} suppressed")
    if document.summary.dynamic_runs:
        parts.append(f"{document.summary.dynamic_runs} dynamic run(s)")
    parts.append(f"{len(run.failed)} skill(s) failed")
    lines.append("; ".join(parts))
    lines.append(f"note: {NOT_SAFE}")
    return printable("\n".join(lines) + "\n")


def to_json(run: AuditRun, base: Path | None = None) -> str:
    del base
    return run.document.model_dump_json(indent=2, by_alias=True) + "\n"


def to_sarif(run: AuditRun, base: Path | None = None) -> str:
    """SARIF 2.1.0; file URIs relative to ``base`` (default: the current folder)."""
    base = absolute_base(base)
    index = {rule_id: number for number, rule_id in enumerate(AUDIT_RULES)}
    rules = [
        {
            "id": rule.id,
            "name": rule.id,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.finds},
            "help": {"text": f"{rule.finds} Fix: {rule.fix}"},
            "defaultConfiguration": {"level": _LEVELS[rule.severity]},
            "properties": {
                "family": rule.family,
                "security-severity": _SCORES[rule.severity],
                "tags": ["security"],
            },
        }
        for rule in AUDIT_RULES.values()
    ]
    results: list[dict[str, Any]] = []
    silenced = [(each.skill, each.finding, each.reason) for each in run.suppressed]
    shown = [(skill, finding, None) for skill in run.document.skills for finding in skill.findings]
    for skill, finding, reason in [*shown, *silenced]:
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "level": _LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [sarif_location(Path(skill.path, finding.file), finding.line, base)],
            "properties": {
                "skill": skill.name,
                "severity": finding.severity,
                "analysis": finding.analysis,
                "evidence": finding.evidence,
            },
        }
        if finding.rule in index:
            result["ruleIndex"] = index[finding.rule]
        if reason is not None:  # code scanning shows it as dismissed, with why
            result["suppressions"] = [{"kind": "external", "justification": reason}]
        results.append(result)
    return sarif_log(rules, results, base)


def to_github(run: AuditRun, base: Path | None = None) -> str:
    """One annotation per finding (critical and high: error, medium: warning, low and info:
    notice), then the text summary."""
    base = absolute_base(base)
    levels = {"error": "error", "warning": "warning", "note": "notice"}
    lines = [
        Annotation(
            levels[_LEVELS[finding.severity]],
            Path(skill.path, finding.file),
            finding.line,
            f"{finding.rule} ({skill.name}): {finding.severity}",
            finding.message,
        ).command(base)
        for skill in run.document.skills
        for finding in skill.findings
    ]
    lines += to_text(run).splitlines()[-2:]
    return printable("\n".join(lines) + "\n")


FORMATTERS: dict[str, Callable[[AuditRun, Path | None], str]] = {
    "text": to_text,
    "json": to_json,
    "sarif": to_sarif,
    "github": to_github,
}

