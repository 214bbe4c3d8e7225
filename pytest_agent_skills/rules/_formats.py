"""Validation reports as text, JSON and SARIF 2.1.0 (for GitHub code scanning).

Every report is valid UTF-8 whatever the folder names: bytes of a name that are not UTF-8
are written ``\\xNN`` (:func:`~pytest_agent_skills.filenames.printable`), and percent-encoded
in SARIF's URIs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..codescan import Annotation, absolute_base, json_text, sarif_location, sarif_log
from ..docpath import schema_uri
from ..filenames import printable
from ..findings import Finding, Severity
from ._catalogue import RULES
from ._ignores import Suppressed
from ._validate import SkillReport


def summary(reports: Sequence[SkillReport]) -> dict[str, int]:
    findings = [finding for report in reports for finding in report.findings]
    return {
        "skills": len(reports),
        "errors": sum(finding.severity is Severity.ERROR for finding in findings),
        "warnings": sum(finding.severity is Severity.WARNING for finding in findings),
        "suppressed": sum(len(report.suppressed) for report in reports),
    }


def rule_statistics(reports: Sequence[SkillReport]) -> list[str]:
    """Counts per rule and severity, as ruff's ``--statistics`` gives them: errors first, each
    severity's most frequent rule first, with the number of skills it is found in."""
    keys = [[(finding.severity, finding.rule) for finding in report.findings] for report in reports]
    findings = Counter(key for skill_keys in keys for key in skill_keys)
    skills = Counter(key for skill_keys in keys for key in set(skill_keys))  # once a skill
    if not findings:
        return []
    order = sorted(findings, key=lambda key: (key[0] is not Severity.ERROR, -findings[key], key))
    width = len(str(max(findings.values())))
    lines = ["findings per rule (count, skills, severity, rule):"]
    for severity, rule in order:
        count, affected = findings[severity, rule], skills[severity, rule]
        lines.append(f"  {count:>{width}} {affected:>{width}}  {severity!s:<7}  {rule}")
    return lines


def to_text(reports: Sequence[SkillReport]) -> str:
    lines = [
        finding.format()
        for report in reports
        for finding in sorted(report.findings, key=lambda finding: finding.line or 0)
    ]
    lines += rule_statistics(reports)
    counts = summary(reports)
    failed = sum(not report.ok for report in reports)
    suppressed = f", {counts['suppressed']} suppressed" if counts["suppressed"] else ""
    lines.append(
        f"{counts['skills']} skill(s) checked: {counts['errors']} error(s),"
        f" {counts['warnings']} warning(s){suppressed}; {failed} skill(s) failed"
    )
    return printable("\n".join(lines) + "\n")


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "severity": str(finding.severity),
        "message": finding.message,
        "line": finding.line,
    }


def _suppressed_by(suppressed: Suppressed) -> dict[str, Any]:
    if suppressed.by == "comment":
        return {"kind": "comment", "line": suppressed.line}
    return {"kind": "per-path-ignore", "pattern": suppressed.pattern}


def to_json(reports: Sequence[SkillReport]) -> str:
    """The report as :class:`._report_model.ValidationDocument` describes it."""
    document = {
        "$schema": schema_uri("validate"),
        "skills": [
            {
                "path": str(report.skill.directory),
                "name": report.skill.name,
                "ok": report.ok,
                "findings": [_finding_json(finding) for finding in report.findings],
                "suppressed": [
                    {**_finding_json(item.finding), "suppressed_by": _suppressed_by(item)}
                    for item in report.suppressed
                ],
            }
            for report in reports
        ],
        "summary": summary(reports),
    }
    return json_text(document)


def to_sarif(reports: Sequence[SkillReport], base: Path | None = None) -> str:
    """SARIF 2.1.0; file URIs are relative to ``base`` (default: the current folder)."""
    base = absolute_base(base)
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
        silenced = [(item.finding, item) for item in report.suppressed]
        for finding, suppressed in [*((f, None) for f in report.findings), *silenced]:
            result: dict[str, Any] = {
                "ruleId": finding.rule,
                "ruleIndex": rule_index[finding.rule],
                "level": str(finding.severity),
                "message": {"text": finding.message},
                "locations": [sarif_location(finding.path, finding.line, base)],
                "properties": {"skill": report.skill.name},
            }
            if suppressed is not None:
                result["suppressions"] = [_sarif_suppression(suppressed)]
            results.append(result)
    return sarif_log(rules, results, base)


def _sarif_suppression(suppressed: Suppressed) -> dict[str, str]:
    """SARIF's kinds: an ignore comment is in the source, a per-path ignore is external."""
    if suppressed.by == "comment":
        justification = f"agent-skills comment on line {suppressed.line}"
        return {"kind": "inSource", "justification": justification}
    return {"kind": "external", "justification": f"per-path ignore {suppressed.pattern!r}"}


def to_github(reports: Sequence[SkillReport], base: Path | None = None) -> str:
    """GitHub Actions workflow commands: one ``::error``/``::warning`` annotation per finding
    (shown inline on the pull request), then the text summary line."""
    base = absolute_base(base)
    lines = [
        Annotation(
            str(finding.severity),
            finding.path,
            finding.line,
            f"{finding.rule} ({report.skill.name})",
            finding.message,
        ).command(base)
        for report in reports
        for finding in sorted(report.findings, key=lambda finding: finding.line or 0)
    ]
    lines.append(to_text(reports).splitlines()[-1])
    return printable("\n".join(lines) + "\n")


def to_junit(reports: Sequence[SkillReport]) -> str:
    """JUnit XML (the junit-10 shape pytest's xunit2 writes): one test case per skill and
    check, failed by its errors; warnings go to the case's system-out."""
    from xml.etree import ElementTree

    from ._catalogue import CHECKS

    suite = ElementTree.Element("testsuite", name="agent-skills validate")
    failures = cases = 0
    for report in reports:
        by_check: dict[str, list[Finding]] = {check: [] for check in CHECKS}
        for finding in report.findings:
            by_check[RULES[finding.rule].check].append(finding)
        classname = report.skill.skill_file.as_posix()
        for check, findings in by_check.items():
            cases += 1
            case = ElementTree.SubElement(suite, "testcase", classname=classname, name=check)
            errors = [finding for finding in findings if finding.is_error]
            if errors:
                failures += 1
                failure = ElementTree.SubElement(
                    case, "failure", message=errors[0].format(), type=errors[0].rule
                )
                failure.text = "\n".join(finding.format() for finding in errors)
            warned = [finding for finding in findings if not finding.is_error]
            if warned:
                output = ElementTree.SubElement(case, "system-out")
                output.text = "\n".join(finding.format() for finding in warned)
    suite.attrib.update(tests=str(cases), failures=str(failures), errors="0", skipped="0")
    root = ElementTree.Element("testsuites")
    root.append(suite)
    return printable(ElementTree.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"


FORMATTERS = {
    "text": to_text,
    "json": to_json,
    "sarif": to_sarif,
    "github": to_github,
    "junit": to_junit,
}
