"""A new ``description`` put into a ``SKILL.md``, changing nothing else byte for byte.

The value's exact place comes from the YAML parser's marks (the scalar's first and last
characters), so line endings (CRLF), comments, the other fields and their order stay as they
were; a block or multi-line value becomes one line (plain when YAML reads it back unchanged,
else double-quoted), the line breaks after it kept.  The result is read back: the
description must be the new one and every other field as it was, or nothing is written.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import AgentSkillsError

FENCE = "---"


class DescriptionEditError(AgentSkillsError):
    """The description of a SKILL.md cannot be replaced in place."""


def _front_matter(text: str) -> tuple[int, int]:
    """The start and end (character offsets) of the front matter between its fences."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r\n") != FENCE:
        raise DescriptionEditError("SKILL.md does not start with a --- front matter fence")
    offset = len(lines[0])
    for line in lines[1:]:
        if line.rstrip("\r\n") in (FENCE, "..."):
            return len(lines[0]), offset
        offset += len(line)
    raise DescriptionEditError("the front matter of SKILL.md has no closing --- fence")


def render(description: str) -> str:
    """``description`` as a one-line YAML scalar: plain when YAML reads it back as is."""
    import yaml

    if "\n" not in description and "\r" not in description and description.strip():
        try:
            read = yaml.safe_load(f"description: {description}\n")
        except yaml.YAMLError:
            read = None
        if read == {"description": description}:
            return description
    return json.dumps(description, ensure_ascii=False)  # a YAML double-quoted scalar


def replace_description(text: str, description: str) -> str:
    """``text`` (a SKILL.md) with its front matter's ``description`` set to ``description``;
    a :class:`DescriptionEditError` when there is no such field to replace in place."""
    import yaml

    start, end = _front_matter(text)
    block = text[start:end]
    try:
        root = yaml.compose(block, Loader=yaml.SafeLoader)
        before: Any = yaml.safe_load(block)
    except yaml.YAMLError as error:
        raise DescriptionEditError(f"the front matter of SKILL.md is not YAML: {error}") from None
    if not isinstance(root, yaml.MappingNode):
        raise DescriptionEditError("the front matter of SKILL.md is not a mapping")
    values = [value for key, value in root.value if key.value == "description"]
    if len(values) != 1 or not isinstance(values[0], yaml.ScalarNode):
        raise DescriptionEditError(
            "SKILL.md has no description: field (or more than one) to replace in place"
        )
    first, last = values[0].start_mark.index, values[0].end_mark.index
    old = block[first:last]
    breaks = old[len(old.rstrip("\r\n")) :]  # a block scalar's own line breaks
    edited = block[:first] + render(description) + breaks + block[last:]
    after = yaml.safe_load(edited)
    if after != {**before, "description": description}:
        raise DescriptionEditError(
            "the description could not be replaced without changing another field"
        )
    return text[:start] + edited + text[end:]
