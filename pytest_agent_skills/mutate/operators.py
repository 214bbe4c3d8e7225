"""The mutation operators, each named and documented, and the deterministic choice of the
mutants of one skill (:func:`mutants_of`)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path

from ..errors import AgentSkillsError
from ..filenames import SKILL_FILE
from ..files import FileReadError
from ..skill import Skill
from .markdown_ops import DESCRIPTION_BUDGET, skill_md_candidates
from .mutant import Candidate, Mutant, unified_diff
from .python_ops import python_candidates
from .shell_ops import shell_candidates

#: Every operator: its name, what it targets and what it does (``agent-skills mutate``'s
#: report and docs/mutation.md name them).
OPERATORS: dict[str, tuple[str, str]] = {
    "arithmetic": ("script", "an arithmetic operator swapped (+ and -, * and /, // and /)"),
    "comparison": ("script", "a comparison moved or turned round (< and <=, == and !=)"),
    "constant": ("script", "a number one more (1 becomes 0), a boolean turned round"),
    "swapped-call": ("script", "a call swapped for its opposite (min and max, any and all,"
                     " head and tail)"),
    "deleted-statement": ("script", "a statement deleted (Python: made pass; shell: a command"
                          " line removed)"),
    "early-exit": ("script", "the script exits with status 0 before it does its work"),
    "unwritten-output": ("script", "a statement that writes a file left out: the output file"
                         " is never written"),
    "deleted-step": ("body", "a step (list item) of SKILL.md deleted"),
    "deleted-paragraph": ("body", "a paragraph of SKILL.md deleted"),
    "dropped-constraint": ("body", "a negative constraint (never, do not, must not, avoid)"
                           " dropped from SKILL.md"),
    "changed-command": ("body", "a command line of SKILL.md changed: the script it runs"
                        " renamed, or its last argument dropped"),
    "removed-doc": ("docs", "a doc the body links removed from the skill"),
    "broken-link": ("docs", "a link of the body to a doc that no longer resolves"),
    "narrowed-description": ("description", "the description cut to its first sentence"),
    "broadened-description": ("description", "the description claims every request"),
    "truncated-description": (
        "description", f"the description cut to {DESCRIPTION_BUDGET} characters, a client's"
        " listing budget",
    ),
}


class MutateError(AgentSkillsError):
    """A skill that cannot be mutated (no SKILL.md, a file that is not read)."""


def candidates(skill: Skill) -> list[Candidate]:
    """Every change the operators make to ``skill``, one per distinct result, in the order of
    the files and lines (SKILL.md first, then the scripts)."""
    found: list[Candidate] = []
    seen: set[tuple[str, str | None]] = set()
    for candidate in _all(skill):
        key = (candidate.file, candidate.text)
        if key not in seen:  # the first operator that makes a change names it
            seen.add(key)
            found.append(candidate)
    return found


def _all(skill: Skill) -> Iterator[Candidate]:
    yield from skill_md_candidates(skill, _read(skill, SKILL_FILE))
    for script in skill.scripts:
        text = _read(skill, script)
        kind = _script_kind(script, text)
        if kind == "python":
            yield from python_candidates(script, text)
        elif kind == "shell":
            yield from shell_candidates(script, text)


def _script_kind(name: str, text: str) -> str | None:
    suffix = Path(name).suffix
    first = text.split("\n", 1)[0]
    if suffix in (".py", ".pyw") or (first.startswith("#!") and "python" in first):
        return "python"
    if suffix in (".sh", ".bash") or (first.startswith("#!") and first.rstrip().endswith(
        ("/sh", "/bash", " sh", " bash")
    )):
        return "shell"
    return None  # other languages have no operators (yet)


def _read(skill: Skill, relative: str) -> str:
    try:
        return (skill.directory / relative).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError, FileReadError) as error:
        raise MutateError(
            f"{skill.directory / relative}: cannot read the file to mutate ({error})"
        ) from None


def mutants_of(skill: Skill, seed: int, max_mutants: int) -> list[Mutant]:
    """At most ``max_mutants`` mutants of ``skill``, the same for the same skill and
    ``seed``: each operator's changes shuffled by ``seed``, then taken in turn from each
    operator (so that a script's hundred constants do not crowd out the body's steps), then
    numbered in the order of their files and lines."""
    by_operator: dict[str, list[Candidate]] = {}
    for candidate in candidates(skill):
        by_operator.setdefault(candidate.operator, []).append(candidate)
    rng = random.Random(seed)
    order = sorted(by_operator)
    for operator in order:
        rng.shuffle(by_operator[operator])
    turns = itertools.zip_longest(*(by_operator[operator] for operator in order))
    chosen = [each for turn in turns for each in turn if each is not None][:max_mutants]
    chosen.sort(key=lambda each: (each.file != SKILL_FILE, each.file, each.line, each.operator))
    originals = {each.file: _read(skill, each.file) for each in chosen}
    return [
        Mutant(
            f"M{number:02d}", each.operator, each.file, each.line, each.text,
            unified_diff(each.file, originals[each.file], each.text),
        )
        for number, each in enumerate(chosen, start=1)
    ]
