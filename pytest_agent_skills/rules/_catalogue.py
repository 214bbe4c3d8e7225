"""The catalogue of rules: every rule id with its check, default severity and source.

A rule id is API: it appears in reports, in severity overrides and in
``docs/rules.md`` (a test keeps that page and this table in step).
"""

from __future__ import annotations

from typing import NamedTuple

from ..findings import Severity

E = Severity.ERROR
W = Severity.WARNING

#: The checks a skill is validated in, in report order; each becomes one pytest item.
CHECKS = ("frontmatter", "fields", "name", "description", "body", "tools", "references")
#: The checks that read the front matter: they find nothing when it did not parse.
FRONT_MATTER_CHECKS = frozenset({"fields", "name", "description", "body"})


#: The runtime whose reading of SKILL.md the tools rules describe (trpc-agent-py 1.2.0).
TRPC = "trpc"


class Rule(NamedTuple):
    id: str
    check: str
    severity: Severity
    summary: str
    source: str
    #: The runtime a rule is about ("" for every runtime): it runs only under profiles
    #: that target that runtime.
    runtime: str = ""


RULES: dict[str, Rule] = {}


def _rule(
    rule_id: str, check: str, severity: Severity, summary: str, source: str, runtime: str = ""
) -> None:
    assert check in CHECKS, check
    RULES[rule_id] = Rule(rule_id, check, severity, summary, source, runtime)


# Reading and splitting SKILL.md (findings made by skill.py while parsing).
_rule("skill-md-encoding", "frontmatter", E, "SKILL.md is not valid UTF-8", "spec")
_rule(
    "skill-md-unreadable", "frontmatter", E,
    "SKILL.md is not read: a link out of the skill, not a regular file, too large", "safety",
)
_rule("frontmatter-missing", "frontmatter", E, "no YAML front matter at the top", "spec")
_rule("frontmatter-unclosed", "frontmatter", E, "the front matter has no closing '---'", "spec")
_rule("frontmatter-empty", "frontmatter", E, "nothing between the '---' fences", "spec")
_rule("frontmatter-yaml", "frontmatter", E, "the front matter is not valid YAML", "spec")
_rule("frontmatter-not-mapping", "frontmatter", E, "the front matter is not a mapping", "spec")
_rule("frontmatter-duplicate-key", "frontmatter", E, "a YAML key appears twice", "yaml")
_rule("frontmatter-bom", "frontmatter", E, "a UTF-8 BOM hides the front matter", "reference")
_rule("frontmatter-fence", "frontmatter", E, "a '---' fence with trailing spaces", "reference")

# Top-level fields other than name and description.
_rule("field-unknown", "fields", E, "a top-level field the profile does not know", "spec")
_rule("license-type", "fields", E, "license is not a non-empty string", "spec")
_rule("compatibility-type", "fields", E, "compatibility is not a string", "spec")
_rule("compatibility-length", "fields", E, "compatibility is empty or over 500 chars", "spec")
_rule("metadata-type", "fields", E, "metadata is not a string-to-string map", "spec")
_rule("metadata-value-scalar", "fields", W, "a metadata value is a YAML number/bool/date", "spec")
_rule("allowed-tools-type", "fields", E, "allowed-tools is not a space-separated string", "spec")

_rule("name-missing", "name", E, "name is absent or empty", "spec")
_rule("name-type", "name", E, "name is not a string", "spec")
_rule("name-length", "name", E, "name is longer than 64 characters", "spec")
_rule("name-charset", "name", E, "name has characters other than a-z, 0-9 and '-'", "spec")
_rule("name-hyphens", "name", E, "name starts/ends with '-' or contains '--'", "spec")
_rule("name-directory", "name", E, "name differs from the folder name", "spec")
_rule("name-duplicate", "name", E, "another collected skill has the same name", "reference")
_rule("name-reserved-word", "name", W, "name contains 'anthropic' or 'claude'", "anthropic")

_rule("description-missing", "description", E, "description is absent or empty", "spec")
_rule("description-type", "description", E, "description is not a string", "spec")
_rule("description-length", "description", E, "description is over 1024 characters", "spec")
_rule("description-xml", "description", W, "description contains XML tags", "anthropic")

_rule("body-empty", "body", W, "no instructions after the front matter", "guidance")
_rule("body-too-long", "body", W, "the body is over 500 lines", "guidance")
_rule("body-tokens", "body", W, "the body is over ~5000 tokens", "guidance")
_rule(
    "ignore-comment-invalid", "body", E, "an agent-skills comment names no or unknown rules",
    "config",
)

# How the tRPC runtime reads the body's Tools: section (trpc-agent-py 1.2.0): only under
# a profile that targets that runtime; elsewhere 'tools:' is just text (often fenced YAML).
_rule("tools-empty", "tools", W, "a Tools: section declares no tool", "reference", TRPC)
_rule("tools-header-text", "tools", W, "text after 'Tools:' is ignored", "reference", TRPC)
_rule(
    "tools-not-identifier", "tools", E, "a declared tool name is not a tool name", "reference",
    TRPC,
)
_rule("tools-duplicate", "tools", W, "a tool is declared twice", "reference", TRPC)
_rule(
    "tools-after-break", "tools", W, "a bullet after a heading/prose is still a tool",
    "reference", TRPC,
)
_rule(
    "tools-unknown", "tools", E, "a declared tool is not among the available tools", "reference",
    TRPC,
)

_rule("reference-missing", "references", E, "a file the body refers to does not exist", "guidance")
_rule("reference-outside", "references", W, "a reference leaves the skill folder", "spec")
_rule("reference-nested", "references", W, "a referenced file refers to further files", "guidance")
_rule(
    "reference-unreadable", "references", E,
    "a referenced doc is not a regular file, too large or unreadable", "safety",
)
