"""Validation rules for skills: every rule has a stable id, a severity and a fix.

``validate(skill, options)`` returns the findings of one skill, the parse
problems of its SKILL.md included; ``validate_paths`` validates every skill
under some paths.  The rule ids are documented in ``docs/rules.md``.

Each name is imported on first use, so that the pytest plugin, which needs only
the catalogue and the options at start-up, does not load every rule module.
"""

from __future__ import annotations

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
    "check_findings": "_validate",
    "duplicate_name_findings": "_validate",
    "duplicate_name_findings_by_file": "_validate",
    "skill_dirs": "_validate",
    "validate": "_validate",
    "validate_check": "_validate",
    "validate_paths": "_validate",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
