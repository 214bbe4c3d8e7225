"""``validate(skill, options)``: every rule over one skill; reports over many."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..findings import Finding, Severity
from ..repository import find_skill_dirs
from ..skill import SKILL_FILE, Skill
from ._base import Hit, RuleFunction
from ._body import check_body
from ._catalogue import CHECKS, RULES
from ._fields import check_description, check_fields, check_name
from ._options import ValidationOptions
from ._references import check_references
from ._tools import check_tools

RULE_FUNCTIONS: dict[str, RuleFunction] = {
    "fields": check_fields,
    "name": check_name,
    "description": check_description,
    "body": check_body,
    "tools": check_tools,
    "references": check_references,
}
DEFAULT_OPTIONS = ValidationOptions()


def _finding(skill: Skill, hit: Hit, severity: Severity) -> Finding:
    return Finding(hit.rule, severity, hit.message, skill.skill_file, hit.line)


def _apply(findings: Iterable[Finding], options: ValidationOptions) -> list[Finding]:
    kept: list[Finding] = []
    for finding in findings:
        severity = options.severity_of(finding.rule)
        if severity is not None:
            kept.append(
                finding if severity is finding.severity else replace(finding, severity=severity)
            )
    return kept


def validate_check(
    skill: Skill, check: str, options: ValidationOptions = DEFAULT_OPTIONS
) -> list[Finding]:
    """The findings of one check (see ``CHECKS``) for one skill."""
    if check == "frontmatter":
        raw: list[Finding] = list(skill.problems)
    else:
        raw = [
            _finding(skill, hit, RULES[hit.rule].severity)
            for hit in RULE_FUNCTIONS[check](skill, options)
        ]
    return _apply(raw, options)


def validate(skill: Skill, options: ValidationOptions = DEFAULT_OPTIONS) -> list[Finding]:
    """Every finding for ``skill``: parse problems first, then each check in order."""
    findings: list[Finding] = []
    for check in CHECKS:
        findings.extend(validate_check(skill, check, options))
    return findings


def duplicate_name_findings(
    skills: Sequence[Skill], options: ValidationOptions = DEFAULT_OPTIONS
) -> list[Finding]:
    """A ``name-duplicate`` finding on every skill whose name an earlier skill already has.

    The first skill in ``skills`` order wins, as in :class:`SkillRepository`.
    """
    first: dict[str, Skill] = {}
    hits: list[Finding] = []
    for skill in skills:
        winner = first.setdefault(skill.name, skill)
        if winner is skill:
            continue
        line = skill.front_matter.line_of("name") if skill.front_matter else None
        message = (
            f"skill {skill.name!r} is also defined in {winner.skill_file}, which wins (the first"
            " one found is used, roots in the order given); this one is ignored. Rename one."
        )
        severity = RULES["name-duplicate"].severity
        hits.append(Finding("name-duplicate", severity, message, skill.skill_file, line))
    return _apply(hits, options)


def duplicate_name_findings_by_file(
    skills: Sequence[Skill], options: ValidationOptions = DEFAULT_OPTIONS
) -> dict[Path, list[Finding]]:
    """:func:`duplicate_name_findings` grouped by the SKILL.md they are about."""
    by_file: dict[Path, list[Finding]] = {}
    for finding in duplicate_name_findings(skills, options):
        by_file.setdefault(finding.path, []).append(finding)
    return by_file


@dataclass(frozen=True)
class SkillReport:
    """One skill's validation result."""

    skill: Skill
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not any(finding.is_error for finding in self.findings)


def skill_dirs(path: Path) -> list[Path]:
    """Skill folders for a path that is a SKILL.md, a skill folder or a root of many skills."""
    if path.name == SKILL_FILE and path.is_file():
        return [path.parent]
    return list(find_skill_dirs(path))


def validate_paths(
    paths: Iterable[Path], options: ValidationOptions = DEFAULT_OPTIONS
) -> list[SkillReport]:
    """Validate every skill under ``paths`` (in the order given), duplicates included."""
    directories: dict[Path, Path] = {}
    for path in paths:  # a skill under two of the paths (a root and its parent) counts once
        for directory in skill_dirs(path):
            directories.setdefault(directory.resolve(), directory)
    skills = [Skill.load(directory) for directory in directories.values()]
    duplicates = duplicate_name_findings_by_file(skills, options)
    return [
        SkillReport(skill, tuple(validate(skill, options) + duplicates.get(skill.skill_file, [])))
        for skill in skills
    ]
