"""Body size guidance: the spec recommends under 500 lines and about 5000 tokens."""

from __future__ import annotations

from collections.abc import Iterator

from ..skill import Skill
from ._base import Hit
from ._options import ValidationOptions

MAX_BODY_LINES = 500
MAX_BODY_TOKENS = 5000
#: A rough token estimate good enough for advice: about four characters per token.
CHARS_PER_TOKEN = 4


def check_body(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    if skill.front_matter is None:
        return
    body = skill.body
    if not body or body.isspace():  # (strip() would copy a long body)
        yield Hit(
            "body-empty",
            skill.body_line,
            "SKILL.md has no instructions after the front matter. Add the steps the agent should"
            " follow, with examples.",
        )
        return
    # The body is the end of SKILL.md from line body_line: its lines are the file's last ones.
    lines = skill.parsed.line_count - skill.body_line + 1
    if lines > MAX_BODY_LINES:
        yield Hit(
            "body-too-long",
            skill.body_line + MAX_BODY_LINES,
            f"the body is {lines} lines long; keep SKILL.md under {MAX_BODY_LINES} lines and move"
            " details into files the body refers to (e.g. references/details.md).",
        )
    tokens = len(body) // CHARS_PER_TOKEN
    if tokens > MAX_BODY_TOKENS:
        yield Hit(
            "body-tokens",
            skill.body_line,
            f"the body is about {tokens} tokens (~{CHARS_PER_TOKEN} characters per token); keep"
            f" it under {MAX_BODY_TOKENS} and move details into referenced files.",
        )
