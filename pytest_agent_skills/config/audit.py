"""The audit settings (``agent-skills audit`` and the pytest ``audit`` items) and the
:class:`~pytest_agent_skills.audit.options.AuditOptions` they build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import settings
from ..audit.severity import DEFAULT_FAIL_ON, FAIL_ON_LEVELS
from ..settings import Setting, SettingValues

if TYPE_CHECKING:
    from ..audit.options import AuditOptions

AUDIT_SETTINGS = settings.declare(
    Setting(
        ini="skills_audit",
        kind="bool",
        flag_takes_value=True,
        help="add an audit item per collected skill: the static audit of its files",
    ),
    Setting(
        ini="skills_audit_fail_on",
        commands=("audit",),
        command_flag="--fail-on",
        kind="choice",
        choices=FAIL_ON_LEVELS,
        default=DEFAULT_FAIL_ON,
        help="the least severity of an audit finding that fails (exit 1, a failed item)",
    ),
    Setting(
        ini="skills_audit_select",
        commands=("audit",),
        command_flag="--select",
        kind="list",
        metavar="RULE",
        help="the audit rules to run (repeat); unset: every rule",
    ),
    Setting(
        ini="skills_audit_ignore",
        commands=("audit",),
        command_flag="--ignore",
        kind="list",
        metavar="RULE",
        help="audit rules not to run (repeat)",
    ),
    Setting(
        ini="skills_audit_suppress",
        commands=("audit",),
        command_flag="--suppress",
        kind="list",
        metavar="GLOB:RULE[,RULE] -- REASON",
        help="audit findings silenced in the skills a glob matches (paths from the rootdir),"
        " each with the reason it is safe; one per line (in the environment variable too)",
        one_per_line=True,
    ),
    Setting(
        ini="skills_audit_dynamic",
        commands=("audit",),
        command_flag="--dynamic",
        kind="bool",
        help="also detonate each skill in the isolated runtime (sandbox, else Docker): its"
        " scripts and shell blocks run baited with fake credentials",
    ),
)


def audit_options(values: SettingValues) -> AuditOptions:
    """The :class:`AuditOptions` of the settings; a bad value raises
    :class:`~pytest_agent_skills.errors.ConfigurationError` naming where it was set."""
    from ..audit.options import AuditOptions, check_fail_on, check_rule_ids, parse_suppressions

    def ids(ini: str) -> frozenset[str]:
        return check_rule_ids(values(ini), values.origin(ini))

    return AuditOptions(
        fail_on=check_fail_on(
            values("skills_audit_fail_on"), values.origin("skills_audit_fail_on")
        ),
        select=ids("skills_audit_select"),
        ignore=ids("skills_audit_ignore"),
        suppressions=parse_suppressions(
            values("skills_audit_suppress"), values.base_dir, values.origin("skills_audit_suppress")
        ),
        dynamic=bool(values("skills_audit_dynamic")),
    )
