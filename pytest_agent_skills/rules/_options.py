"""Validation options: profiles, per-rule severity overrides and per-path ignores.

Strict by default: the ``spec`` profile with every rule at its catalogue
severity.  Each relaxation is explicit - a profile that knows more fields,
``allow_unknown_fields``, a per-rule override such as ``body-too-long=off`` or
``reference-missing=warning``, or rules ignored for some skills' paths.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from ..errors import ConfigurationError
from ..filenames import SKILL_FILE
from ..findings import Severity
from ._catalogue import RULES, TRPC, Rule

SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
CLAUDE_CODE_FIELDS = frozenset(
    {
        "when_to_use", "argument-hint", "arguments", "disable-model-invocation", "user-invocable",
        "model", "effort", "context", "agent", "hooks", "paths", "shell",
    }
)
OFF = "off"
LEVELS = ("error", "warning", OFF)
_NO_SEVERITIES: Mapping[str, str] = MappingProxyType({})


class Profile(NamedTuple):
    """A named set of accepted fields, rule severities and the runtime it targets."""

    name: str
    summary: str
    fields: frozenset[str] = SPEC_FIELDS
    #: allowed-tools may be a YAML list (Claude Code accepts both forms).
    allowed_tools_list: bool = False
    severities: Mapping[str, str] = _NO_SEVERITIES
    #: The runtime whose own rules run too ("" for none): e.g. the trpc runtime's Tools: rules.
    runtime: str = ""

    def runs(self, rule: Rule) -> bool:
        """Whether the rule runs under this profile (at some severity)."""
        return not rule.runtime or rule.runtime == self.runtime


PROFILES: dict[str, Profile] = {
    "spec": Profile("spec", "the Agent Skills specification, closed field set (default)"),
    "claude-code": Profile(
        "claude-code",
        "spec plus Claude Code's extension fields; list-valued allowed-tools; name may be omitted",
        fields=SPEC_FIELDS | CLAUDE_CODE_FIELDS,
        allowed_tools_list=True,
        severities={"name-missing": "warning"},
    ),
    "trpc": Profile(
        "trpc",
        "spec plus the tRPC agent runtime's Tools: section rules (trpc-agent-py 1.2.0)",
        runtime=TRPC,
    ),
}


PER_PATH_SYNTAX = "GLOB:RULE[,RULE...]"


class PathIgnore(NamedTuple):
    """Rules ignored for the skills a glob matches.

    The glob is matched (``*`` crosses '/') against the skill folder and its SKILL.md, both
    relative to ``base`` and written with '/', and, when it has no '/', against the folder's
    name alone.
    """

    pattern: str
    rules: frozenset[str]
    base: str

    def matches(self, directory: str) -> bool:
        absolute = os.path.abspath(directory)
        pattern = self.pattern.rstrip("/")
        if "/" not in pattern:
            return fnmatch.fnmatchcase(os.path.basename(absolute), pattern)
        if not os.path.isabs(pattern):
            absolute = os.path.relpath(absolute, self.base).replace(os.sep, "/")
        return fnmatch.fnmatchcase(absolute, pattern) or fnmatch.fnmatchcase(
            f"{absolute}/{SKILL_FILE}", pattern
        )


def parse_per_path_ignores(
    items: Iterable[str], base: str | os.PathLike[str], origin: str
) -> tuple[PathIgnore, ...]:
    """``["skills/legacy/*:body-too-long,reference-missing", "old-*: name-directory"]``.

    Entries are separated by new lines, spaces or commas: a word holding ':' starts an
    entry (its glob before the ':'), the words after it are its rule ids.  ``origin``
    names where the items come from in error messages.
    """
    entries: list[tuple[str, list[str]]] = []
    for word in re.findall(r"[^\s,]+", "\n".join(items)):
        glob, colon, rules = word.partition(":")
        if colon:
            if not glob:
                raise ConfigurationError(
                    f"{origin}: {word!r} has no path before ':'; write {PER_PATH_SYNTAX}"
                )
            entries.append((glob, [rules] if rules else []))
        elif entries:
            entries[-1][1].append(word)
        else:
            raise ConfigurationError(
                f"{origin}: {word!r} is not {PER_PATH_SYNTAX}"
                " (e.g. 'skills/legacy/*:body-too-long')"
            )
    ignores = []
    for glob, rules in entries:
        if not rules:
            raise ConfigurationError(
                f"{origin}: {glob + ':'!r} names no rule; write {PER_PATH_SYNTAX}"
            )
        for rule in rules:
            if rule not in RULES:
                raise ConfigurationError(
                    f"{origin}: unknown rule id {rule!r} for {glob!r}{did_you_mean(rule)}"
                    " ('agent-skills rules' lists every rule id)"
                )
        ignores.append(PathIgnore(glob, frozenset(rules), os.path.abspath(base)))
    return tuple(ignores)


def did_you_mean(rule: str) -> str:
    """`` (did you mean 'x'?)`` for the closest rule id, or nothing."""
    import difflib  # only for this error

    close = difflib.get_close_matches(rule, RULES, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


NOT_RUN = "-"


def profile_rule_table() -> str:
    """The Markdown table of docs/rules.md: each rule's severity under each profile
    (``-``: the profile does not run it). tests/rules/test_rules_docs.py checks the page
    holds it."""
    rows = [
        "| rule | " + " | ".join(f"`{name}`" for name in PROFILES) + " |",
        "| --- |" + " --- |" * len(PROFILES),
    ]
    for rule in RULES.values():
        cells = []
        for profile in PROFILES.values():
            level = profile.severities.get(rule.id, str(rule.severity))
            cells.append(level if profile.runs(rule) else NOT_RUN)
        rows.append(f"| `{rule.id}` | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class ValidationOptions:
    """What :func:`~pytest_agent_skills.rules.validate` checks and how severely.

    ``available_tools``: when set, every ``Tools:`` name must be in it.
    ``severities``: rule id -> ``error`` / ``warning`` / ``off``; wins over the profile
    (checked as the options are made: a :class:`ConfigurationError` names a bad one).
    ``per_path_ignores``: rules ignored for skills whose path matches (see
    :func:`parse_per_path_ignores`).
    """

    available_tools: frozenset[str] | None = None
    profile: Profile = PROFILES["spec"]
    allow_unknown_fields: bool = False
    # A factory: a dataclass refuses a default that is no dict key, as a mapping is not.
    severities: Mapping[str, str] = field(default_factory=lambda: _NO_SEVERITIES)
    per_path_ignores: tuple[PathIgnore, ...] = ()

    def __post_init__(self) -> None:
        check_severities(self.severities, "severities")

    def severity_of(self, rule_id: str) -> Severity | None:
        """The effective severity of a rule, ``None`` when it is off or the profile does not
        run it."""
        if not self.profile.runs(RULES[rule_id]):
            return None
        level = self.severities.get(rule_id) or self.profile.severities.get(rule_id)
        if level is None and rule_id == "field-unknown" and self.allow_unknown_fields:
            level = "warning"
        if level is None:
            return RULES[rule_id].severity
        return None if level == OFF else Severity(level)

    @classmethod
    def build(
        cls,
        *,
        available_tools: Iterable[str] | None = None,
        profile: str = "spec",
        allow_unknown_fields: bool = False,
        severities: Iterable[str] | Mapping[str, str] = (),
        per_path_ignores: tuple[PathIgnore, ...] = (),
    ) -> ValidationOptions:
        """Options from plain values (flags, ini lines); bad values raise ConfigurationError."""
        if profile not in PROFILES:
            raise ConfigurationError(
                f"unknown validation profile {profile!r} (choose from {', '.join(PROFILES)})"
            )
        if available_tools is not None and PROFILES[profile].runtime != TRPC:
            raise ConfigurationError(
                f"available tools are checked against the Tools: section of the tRPC runtime,"
                f" which the {profile} profile does not check: add the trpc profile"
                f" (--skills-profile trpc, or --profile trpc with agent-skills validate)"
            )
        overrides = severities if isinstance(severities, Mapping) else parse_severities(severities)
        return cls(
            available_tools=frozenset(available_tools) if available_tools is not None else None,
            profile=PROFILES[profile],
            allow_unknown_fields=allow_unknown_fields,
            severities=dict(overrides),
            per_path_ignores=per_path_ignores,
        )


def parse_severities(items: Iterable[str], origin: str | None = None) -> dict[str, str]:
    """``["body-too-long=off", "name-reserved-word=error"]`` -> a checked mapping; ``origin``
    (where the items were set: a flag, a variable, a configuration file) starts every error."""
    what = f"{origin}: rule severity" if origin else "rule severity"
    parsed: dict[str, str] = {}
    for item in items:
        rule_id, separator, level = item.partition("=")
        if not separator:
            raise ConfigurationError(
                f"{what} {item!r} is not RULE=LEVEL (e.g. body-too-long=off;"
                f" levels: {', '.join(LEVELS)})"
            )
        parsed[rule_id.strip()] = level.strip().lower()
    check_severities(parsed, what)
    return parsed


def check_severities(severities: Mapping[str, str], origin: str) -> None:
    for rule_id, level in severities.items():
        if rule_id not in RULES:
            raise ConfigurationError(
                f"{origin}: unknown rule id {rule_id!r} ('agent-skills rules' lists every rule id)"
            )
        if level not in LEVELS:
            raise ConfigurationError(
                f"{origin}: invalid level {level!r} for {rule_id} (choose from {', '.join(LEVELS)})"
            )
