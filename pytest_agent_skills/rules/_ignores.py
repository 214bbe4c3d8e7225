"""Per-skill exemptions, as linters have them: per-path ignores in the configuration (like
ruff's per-file-ignores) and ``<!-- agent-skills: ignore RULE -->`` comments in SKILL.md.

A suppressed finding does not fail anything; reports still list it as suppressed, with
what suppressed it.  Scope of a comment (markdownlint's and ESLint's two common forms):

- ``<!-- agent-skills: ignore RULE[, RULE...] -->`` anywhere in the body: the whole SKILL.md
  (front-matter findings included), like ``<!-- markdownlint-disable-file -->``;
- ``<!-- agent-skills: ignore-next-line RULE[, RULE...] -->``: only the line after the
  comment, like ``<!-- markdownlint-disable-next-line -->``.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..bodyscan import Directive
from ..errors import ConfigurationError
from ..findings import Finding
from ..skill import SKILL_FILE, Skill
from ._base import Hit
from ._catalogue import RULES

IGNORE = "ignore"
IGNORE_NEXT_LINE = "ignore-next-line"
ACTIONS = (IGNORE, IGNORE_NEXT_LINE)
#: The environment twin of the per-path ignores (the settings registry names it too).
PER_PATH_IGNORES_ENV = "SKILLS_PER_PATH_IGNORES"
PER_PATH_SYNTAX = "GLOB:RULE[,RULE...]"
#: Findings about the comments themselves are not silenced by comments.
_UNSUPPRESSIBLE_BY_COMMENT = frozenset({"ignore-comment-invalid"})


@dataclass(frozen=True)
class Suppressed:
    """A finding that an exemption silenced: ``by`` is ``comment`` (``line`` of the comment)
    or ``per-path-ignore`` (``pattern``)."""

    finding: Finding
    by: str
    line: int | None = None
    pattern: str = ""


@dataclass(frozen=True)
class PathIgnore:
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
                    f"{origin}: unknown rule id {rule!r} for {glob!r}{_did_you_mean(rule)} (the"
                    " rule ids are listed in docs/rules.md)"
                )
        ignores.append(PathIgnore(glob, frozenset(rules), os.path.abspath(base)))
    return tuple(ignores)


def _did_you_mean(rule: str) -> str:
    close = difflib.get_close_matches(rule, RULES, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_directives(skill: Skill) -> Iterator[Hit]:
    """``ignore-comment-invalid``: every agent-skills comment must say what it ignores."""
    for directive in skill.markdown.directives():
        if directive.action not in ACTIONS:
            yield Hit(
                "ignore-comment-invalid",
                directive.line,
                f"unknown agent-skills action {directive.action!r}: write '<!-- agent-skills:"
                " ignore RULE -->' (the whole file) or '<!-- agent-skills: ignore-next-line"
                " RULE -->' (the next line).",
            )
        elif not directive.rules:
            yield Hit(
                "ignore-comment-invalid",
                directive.line,
                f"the agent-skills comment names no rule to {directive.action}: list the rule ids,"
                f" e.g. '<!-- agent-skills: {directive.action} body-too-long -->'.",
            )
        for rule in directive.rules:
            if directive.action in ACTIONS and rule not in RULES:
                yield Hit(
                    "ignore-comment-invalid",
                    directive.line,
                    f"unknown rule id {rule!r} in the agent-skills comment{_did_you_mean(rule)};"
                    " the rule ids are listed in docs/rules.md.",
                )


def suppress(
    skill: Skill, findings: list[Finding], ignores: tuple[PathIgnore, ...]
) -> tuple[list[Finding], list[Suppressed]]:
    """Split ``findings`` of ``skill`` into those kept and those an exemption silences."""
    if not findings:
        return findings, []
    by_comment: dict[str, int] = {}
    next_line: dict[tuple[int, str], int] = {}
    for directive in _valid_directives(skill):
        for rule in directive.rules:
            if directive.action == IGNORE:
                by_comment.setdefault(rule, directive.line)
            else:
                next_line.setdefault((directive.next_line, rule), directive.line)
    by_path: dict[str, str] = {}
    for ignore in ignores:
        if ignore.matches(str(skill.directory)):
            for rule in ignore.rules:
                by_path.setdefault(rule, ignore.pattern)
    if not (by_comment or next_line or by_path):
        return findings, []
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    for finding in findings:
        rule = finding.rule
        comment = None
        if rule not in _UNSUPPRESSIBLE_BY_COMMENT:
            comment = by_comment.get(rule) or next_line.get((finding.line or 0, rule))
        if comment is not None:
            suppressed.append(Suppressed(finding, "comment", line=comment))
        elif rule in by_path:
            suppressed.append(Suppressed(finding, "per-path-ignore", pattern=by_path[rule]))
        else:
            kept.append(finding)
    return kept, suppressed


def _valid_directives(skill: Skill) -> Iterator[Directive]:
    for directive in skill.markdown.directives():
        if directive.action in ACTIONS:
            yield directive
