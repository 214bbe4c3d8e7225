"""What an audit is asked: the severity that fails it, the rules it runs, the findings the
configuration suppresses (each with its reason), and whether a detonation run follows."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from typing import NamedTuple

from ..errors import ConfigurationError
from ..rules import PathIgnore
from .severity import DEFAULT_FAIL_ON, FAIL_ON_LEVELS, Severity, rank

SUPPRESSION_SYNTAX = "'GLOB:RULE[,RULE] -- REASON'"


class Suppression(NamedTuple):
    """Findings of some rules in the skills a glob matches, silenced for a stated reason."""

    where: PathIgnore
    reason: str

    def covers(self, skill_folder: str, rule: str) -> bool:
        return rule in self.where.rules and self.where.matches(skill_folder)


class AuditOptions(NamedTuple):
    """The options of one audit (of the skills one configuration file covers)."""

    fail_on: Severity = DEFAULT_FAIL_ON
    #: The rules run; empty: every rule.
    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    suppressions: tuple[Suppression, ...] = ()
    dynamic: bool = False

    def runs(self, rule: str) -> bool:
        return (not self.select or rule in self.select) and rule not in self.ignore

    def fails(self, severity: Severity) -> bool:
        return rank(severity) <= rank(self.fail_on)

    def suppressed_by(self, skill_folder: str, rule: str) -> Suppression | None:
        return next((each for each in self.suppressions if each.covers(skill_folder, rule)), None)


def check_rule_ids(ids: Iterable[str], origin: str) -> frozenset[str]:
    """``ids`` as a set, refused with the closest id when one is not an audit rule."""
    from .catalogue import AUDIT_RULES

    chosen = frozenset(ids)
    for rule in sorted(chosen):
        if rule not in AUDIT_RULES:
            close = difflib.get_close_matches(rule, AUDIT_RULES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigurationError(
                f"{origin}: unknown audit rule id {rule!r}{hint} ('agent-skills rules'"
                " lists every rule)"
            )
    return chosen


def check_fail_on(value: str, origin: str) -> Severity:
    for level in FAIL_ON_LEVELS:
        if value == level:
            return level
    raise ConfigurationError(
        f"{origin}: invalid severity {value!r} to fail on (choose from {', '.join(FAIL_ON_LEVELS)})"
    )


def parse_suppressions(
    items: Iterable[str], base: str | os.PathLike[str], origin: str
) -> tuple[Suppression, ...]:
    """``["skills/scanner:instruction-override,fake-system-block -- quotes attacks to detect
    them"]``: one per item, a reason after `` -- `` required.  A second `` -- `` is refused: it
    reads as two suppressions written on one line (the reason would swallow the second)."""
    suppressions = []
    for item in items:
        where, separator, reason = item.partition(" -- ")
        if not separator or not reason.strip():
            raise ConfigurationError(
                f"{origin}: suppression {item.strip()!r} gives no reason; write"
                f" {SUPPRESSION_SYNTAX} (every suppression says why the finding is safe)"
            )
        if " -- " in reason:
            raise ConfigurationError(
                f"{origin}: suppression {item.strip()!r} has ' -- ' twice: write one"
                f" {SUPPRESSION_SYNTAX} per line (in an environment variable too: a newline"
                " between two) and no ' -- ' inside a reason"
            )
        glob, colon, rules = where.strip().partition(":")
        if not colon or not glob or not rules:
            raise ConfigurationError(
                f"{origin}: suppression {item.strip()!r} is not {SUPPRESSION_SYNTAX}"
            )
        ids = check_rule_ids((rule.strip() for rule in rules.split(",") if rule.strip()), origin)
        suppressions.append(
            Suppression(PathIgnore(glob, ids, os.path.abspath(base)), reason.strip())
        )
    return tuple(suppressions)
