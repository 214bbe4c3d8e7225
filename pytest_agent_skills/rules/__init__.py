"""Validation rules for skills: every rule has a stable id, a severity and a fix.

``validate(skill, options)`` returns the findings of one skill, the parse
problems of its SKILL.md included; ``validate_paths`` validates every skill
under some paths.  The rule ids are documented in ``docs/rules.md``.
"""

from ._catalogue import CHECKS, FRONT_MATTER_CHECKS, RULES, Rule
from ._formats import FORMATTERS, summary, to_json, to_sarif, to_text
from ._options import PROFILES, Profile, ValidationOptions, parse_severities
from ._validate import (
    SkillReport,
    duplicate_name_findings,
    duplicate_name_findings_by_file,
    skill_dirs,
    validate,
    validate_check,
    validate_paths,
)

__all__ = [
    "CHECKS",
    "FORMATTERS",
    "FRONT_MATTER_CHECKS",
    "PROFILES",
    "RULES",
    "Profile",
    "Rule",
    "SkillReport",
    "ValidationOptions",
    "duplicate_name_findings",
    "duplicate_name_findings_by_file",
    "parse_severities",
    "skill_dirs",
    "summary",
    "to_json",
    "to_sarif",
    "to_text",
    "validate",
    "validate_check",
    "validate_paths",
]
