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

from collections.abc import Iterator
from typing import NamedTuple

from ..bodyparse import Directive
from ..findings import Finding
from ..skill import Skill
from ._base import Hit
from ._catalogue import RULES
from ._options import PathIgnore, did_you_mean

IGNORE = "ignore"
IGNORE_NEXT_LINE = "ignore-next-line"
ACTIONS = (IGNORE, IGNORE_NEXT_LINE)
#: Findings about the comments themselves are not silenced by comments.
_UNSUPPRESSIBLE_BY_COMMENT = frozenset({"ignore-comment-invalid"})


class Suppressed(NamedTuple):
    """A finding that an exemption silenced: ``by`` is ``comment`` (``line`` of the comment)
    or ``per-path-ignore`` (``pattern``)."""

    finding: Finding
    by: str
    line: int | None = None
    pattern: str = ""


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
                    f"unknown rule id {rule!r} in the agent-skills comment{did_you_mean(rule)};"
                    " 'agent-skills rules' lists every rule id.",
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
