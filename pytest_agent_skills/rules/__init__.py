"""Validation rules for skills: every rule has a stable id, a severity and a fix.

``validate(skill, options)`` returns the findings of one skill, the parse
problems of its SKILL.md included; ``validate_paths`` validates every skill
under some paths.  The rule ids are documented in ``docs/rules.md``.

Each name is imported on first use, so that the pytest plugin, which needs only
the catalogue and the options at start-up, does not load every rule module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: The names of the validation profiles (the keys of ``PROFILES``, in order), for the
#: settings' choices without loading the rule tables.
PROFILE_NAMES = ("spec", "claude-code", "trpc")

#: Public name -> module of this package defining it.
_EXPORTS = {
    "CHECKS": "_catalogue",
    "FRONT_MATTER_CHECKS": "_catalogue",
    "RULES": "_catalogue",
    "Rule": "_catalogue",
    "FORMATTERS": "_formats",
    "profile_rule_table": "_options",
    "summary": "_formats",
    "to_json": "_formats",
    "to_sarif": "_formats",
    "to_text": "_formats",
    "PathIgnore": "_options",
    "Suppressed": "_ignores",
    "parse_per_path_ignores": "_options",
    "PROFILES": "_options",
    "Profile": "_options",
    "ValidationOptions": "_options",
    "parse_severities": "_options",
    "SkillReport": "_validate",
    "report_skill": "_validate",
    "check_findings": "_validate",
    "duplicate_name_findings": "_validate",
    "duplicate_name_findings_by_file": "_validate",
    "skill_dirs": "_validate",
    "validate": "_validate",
    "validate_check": "_validate",
    "validate_paths": "_validate",
    "WorkerFailed": "_split",
    "default_jobs": "_split",
}

__all__ = sorted(_EXPORTS)


if TYPE_CHECKING:  # the lazy names' own types, for type checkers
    from ._catalogue import CHECKS as CHECKS
    from ._catalogue import FRONT_MATTER_CHECKS as FRONT_MATTER_CHECKS
    from ._catalogue import RULES as RULES
    from ._catalogue import Rule as Rule
    from ._formats import FORMATTERS as FORMATTERS
    from ._formats import summary as summary
    from ._formats import to_json as to_json
    from ._formats import to_sarif as to_sarif
    from ._formats import to_text as to_text
    from ._ignores import Suppressed as Suppressed
    from ._options import PROFILES as PROFILES
    from ._options import PathIgnore as PathIgnore
    from ._options import Profile as Profile
    from ._options import ValidationOptions as ValidationOptions
    from ._options import parse_per_path_ignores as parse_per_path_ignores
    from ._options import parse_severities as parse_severities
    from ._options import profile_rule_table as profile_rule_table
    from ._split import WorkerFailed as WorkerFailed
    from ._split import default_jobs as default_jobs
    from ._validate import SkillReport as SkillReport
    from ._validate import check_findings as check_findings
    from ._validate import duplicate_name_findings as duplicate_name_findings
    from ._validate import duplicate_name_findings_by_file as duplicate_name_findings_by_file
    from ._validate import report_skill as report_skill
    from ._validate import skill_dirs as skill_dirs
    from ._validate import validate as validate
    from ._validate import validate_check as validate_check
    from ._validate import validate_paths as validate_paths


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
