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

#: Each module of this package and the public names it defines.
_MODULES = {
    "_catalogue": ("CHECKS", "FRONT_MATTER_CHECKS", "RULES", "Rule"),
    "_formats": ("FORMATTERS", "summary", "to_json", "to_sarif", "to_text"),
    "_ignores": ("Suppressed",),
    "_options": (
        "PROFILES",
        "PathIgnore",
        "Profile",
        "ValidationOptions",
        "parse_per_path_ignores",
        "parse_severities",
        "profile_rule_table",
    ),
    "_split": ("WorkerFailed", "default_jobs"),
    "_validate": (
        "SkillReport",
        "check_findings",
        "duplicate_name_findings",
        "duplicate_name_findings_by_file",
        "report_skill",
        "skill_dirs",
        "validate",
        "validate_check",
        "validate_paths",
    ),
}
#: Public name -> module defining it.
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

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
