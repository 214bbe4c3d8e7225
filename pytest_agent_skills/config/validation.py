"""The validation settings and the :class:`~pytest_agent_skills.rules.ValidationOptions`
they build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import settings
from ..rules import PROFILE_NAMES
from ..settings import Setting, SettingValues

if TYPE_CHECKING:  # the rule tables load when options are built, not with the settings
    from ..rules import ValidationOptions

VALIDATION_SETTINGS = settings.declare(
    Setting(
        ini="skills_validate",
        kind="bool",
        flag_takes_value=True,
        default=True,
        help="collect SKILL.md files as validation tests",
    ),
    Setting(
        ini="skills_profile",
        commands=("validate",),
        kind="choice",
        choices=PROFILE_NAMES,
        default="spec",
        help="validation profile: spec (closed field set), claude-code (adds its extension"
        " fields) or trpc (adds the tRPC runtime's Tools: rules)",
    ),
    Setting(
        ini="skills_available_tools",
        commands=("validate",),
        flag="--skills-available-tool",
        kind="list",
        metavar="NAME",
        help="tool names a Tools: section may declare, under the trpc profile (others fail the"
        " tools check); unset: not checked",
    ),
    Setting(
        ini="skills_allow_unknown_fields",
        commands=("validate",),
        kind="bool",
        help="report unknown front-matter fields as warnings instead of errors",
    ),
    Setting(
        ini="skills_rule_severity",
        commands=("validate",),
        kind="list",
        metavar="RULE=LEVEL",
        help="override a rule's severity: error, warning or off (e.g. body-too-long=off)",
    ),
    Setting(
        ini="skills_per_path_ignores",
        commands=("validate",),
        flag="--skills-per-path-ignore",
        kind="list",
        metavar="GLOB:RULE[,RULE]",
        help="rules ignored for the skills a glob matches, paths from the rootdir (the"
        " configuration file's folder), e.g. skills/legacy/*:body-too-long",
    ),
)


def validation_options(values: SettingValues) -> ValidationOptions:
    """The :class:`ValidationOptions` of the settings; per-path ignores are relative to
    ``values.base_dir``.  A bad value raises
    :class:`~pytest_agent_skills.errors.ConfigurationError` naming where it was set."""
    from ..rules import ValidationOptions, parse_per_path_ignores, parse_severities

    ignores = values("skills_per_path_ignores")
    severities = values("skills_rule_severity")
    return ValidationOptions.build(
        available_tools=values("skills_available_tools") or None,
        profile=values("skills_profile"),
        allow_unknown_fields=values("skills_allow_unknown_fields"),
        severities=parse_severities(severities, values.origin("skills_rule_severity"))
        if severities
        else {},
        per_path_ignores=parse_per_path_ignores(
            ignores, values.base_dir, values.origin("skills_per_path_ignores")
        )
        if ignores
        else (),
    )
