"""The operators on SKILL.md and its docs: a deleted step or paragraph, a dropped negative
constraint, a changed command line (the body, read as CommonMark by
:func:`~pytest_agent_skills.bodyparse.blocks`); a linked doc removed or a link that no longer
resolves (the references :mod:`~pytest_agent_skills.bodyscan` finds); the description
narrowed, broadened or truncated (the front matter :mod:`~pytest_agent_skills.skill` reads)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from ..bodyparse import blocks
from ..filenames import SKILL_FILE
from ..skill import Skill
from .mutant import Candidate, spliced

#: Characters of a description a client with a tight listing budget shows: the truncated
#: description keeps this many.
DESCRIPTION_BUDGET = 100
#: What a broadened description adds: it now claims every request.
BROADENING = " Use it for any request about files, data, documents or code."
_NEGATIVE = re.compile(
    r"[^.!?\n]*\b(?:never|do not|don't|must not|should not|avoid|not allowed)\b"
    r"[^.!?\n]*[.!?]?[ \t]*",
    re.IGNORECASE,
)
_COMMAND_WORDS = frozenset(
    {"python", "python3", "bash", "sh", "node", "uv", "npx", "npm", "ruby", "perl", "deno"}
)
_LIST_MARKER = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s*$")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


def skill_md_candidates(skill: Skill, text: str) -> Iterator[Candidate]:
    """Every change of SKILL.md: body, doc links, description."""
    lines = text.splitlines(keepends=True)
    first = skill.body_line - 1  # the body's first line, from 0, in the file
    body_blocks = blocks(skill.body)
    code_lines = {
        line
        for block in body_blocks
        if block.type in ("fence", "code_block")
        for line in range(first + block.start, first + block.end)
    }

    # The narrower operators first: a change two operators make is named by the first.
    for index in range(first, len(lines)):
        line = lines[index]
        if index in code_lines:
            changed = _changed_command(line, skill)
            if changed is not None:
                replaced = spliced(lines, index, index + 1, [changed])
                yield Candidate("changed-command", SKILL_FILE, index + 1, replaced)
            continue
        yield from _dropped_constraints(lines, index)
    for block in body_blocks:
        start, end = first + block.start, first + block.end
        if block.type == "list_item_open":
            yield Candidate("deleted-step", SKILL_FILE, start + 1, spliced(lines, start, end))
        elif block.type == "paragraph_open" and block.level == 0:
            yield Candidate("deleted-paragraph", SKILL_FILE, start + 1, spliced(lines, start, end))
    yield from _link_candidates(skill, lines)
    yield from _description_candidates(skill, lines)


def _dropped_constraints(lines: list[str], index: int) -> Iterator[Candidate]:
    line = lines[index]
    for match in _NEGATIVE.finditer(line):
        rest = line[: match.start()] + line[match.end() :]
        kept = [] if _LIST_MARKER.fullmatch(rest) or not rest.strip() else [rest.rstrip() + "\n"]
        dropped = spliced(lines, index, index + 1, kept)
        yield Candidate("dropped-constraint", SKILL_FILE, index + 1, dropped)


def _changed_command(line: str, skill: Skill) -> str | None:
    """A command line of a code block, changed: the script it runs renamed when it names one
    of the skill's files, else its last argument dropped."""
    words = line.split()
    if not words or (words[0].lstrip("$ ") not in _COMMAND_WORDS and words[0] != "$"):
        return None
    for word in words[1:]:
        if word in skill.scripts:
            path = PurePosixPath(word)
            return line.replace(word, str(path.with_name(path.stem + "_old" + path.suffix)), 1)
    if len(words) > 2:
        cut = line.rstrip().rfind(words[-1])
        return line[:cut].rstrip() + "\n"
    return None


def _link_candidates(skill: Skill, lines: list[str]) -> Iterator[Candidate]:
    """``removed-doc`` for each doc the body links, ``broken-link`` for its first link."""
    docs = set(skill.docs)
    folders = frozenset(doc.split("/", 1)[0] for doc in docs if "/" in doc)
    seen: set[str] = set()
    for reference in skill.markdown.references(folders):
        target = str(PurePosixPath(reference.target.split("#", 1)[0]))
        if target not in docs or target in seen:
            continue
        seen.add(target)
        yield Candidate("removed-doc", target, 1, None)
        index = reference.line - 1
        if 0 <= index < len(lines) and reference.target in lines[index]:
            path = PurePosixPath(target)
            moved = str(path.with_name(path.stem + "-moved" + path.suffix))
            changed = lines[index].replace(reference.target, moved, 1)
            broken = spliced(lines, index, index + 1, [changed])
            yield Candidate("broken-link", SKILL_FILE, index + 1, broken)


def _description_candidates(skill: Skill, lines: list[str]) -> Iterator[Candidate]:
    """The description narrowed (its first sentence), broadened, truncated to
    :data:`DESCRIPTION_BUDGET` characters; only a description written on one line."""
    front = skill.front_matter
    description = skill.description
    if front is None or not description:
        return
    index = front.line_of("description") - 1
    if not (0 <= index < len(lines)) or not lines[index].startswith("description:"):
        return
    if len(lines) > index + 1 and lines[index + 1][:1] in (" ", "\t"):
        return  # folded over several lines: left alone

    def with_description(new: str) -> str:
        line = "description: " + json.dumps(new, ensure_ascii=False) + "\n"
        return spliced(lines, index, index + 1, [line])

    end = _SENTENCE_END.search(description)
    if end is not None and end.end() < len(description):
        narrowed = description[: end.start() + 1]
        yield Candidate("narrowed-description", SKILL_FILE, index + 1, with_description(narrowed))
    broadened = description + BROADENING
    yield Candidate("broadened-description", SKILL_FILE, index + 1, with_description(broadened))
    if len(description) > DESCRIPTION_BUDGET:
        truncated = description[:DESCRIPTION_BUDGET]
        yield Candidate(
            "truncated-description", SKILL_FILE, index + 1, with_description(truncated)
        )
