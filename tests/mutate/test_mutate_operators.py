"""The mutation operators on real files: what each changes, pinned; the choice of mutants:
deterministic for a skill and seed, capped, spread across operators."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_agent_skills.mutate.operators import OPERATORS, MutateError, candidates, mutants_of
from pytest_agent_skills.mutate.python_ops import python_candidates
from pytest_agent_skills.mutate.shell_ops import shell_candidates
from pytest_agent_skills.skill import Skill
from tests.support.mutation import FIXTURES, SKILL

PYTHON = '''"""Doc 1."""
import sys


def main() -> int:
    """Doc 2."""
    total = max(3, 4) + 2 * 5
    if total >= 10:
        open("out.txt", "w").write(str(total))
    return 0


sys.exit(main())
'''


def _changes(found: list, text: str) -> set[tuple[str, int, str]]:
    """Each candidate as (operator, line, the changed line or what replaced it)."""
    before = text.splitlines()
    shown = set()
    for each in found:
        after = each.text.splitlines()
        changed = [line for line in after if line not in before] or ["(line removed)"]
        shown.add((each.operator, each.line, changed[0].strip()))
    return shown


def test_the_python_operators_change_what_they_name() -> None:
    found = list(python_candidates("x.py", PYTHON))
    assert _changes(found, PYTHON) == {
        ("swapped-call", 7, "total = min(3, 4) + 2 * 5"),
        ("arithmetic", 7, "total = max(3, 4) - 2 * 5"),
        ("arithmetic", 7, "total = max(3, 4) + 2 / 5"),
        ("constant", 7, "total = max(4, 4) + 2 * 5"),
        ("constant", 7, "total = max(3, 5) + 2 * 5"),
        ("constant", 7, "total = max(3, 4) + 3 * 5"),
        ("constant", 7, "total = max(3, 4) + 2 * 6"),
        ("comparison", 8, "if total > 10:"),
        ("constant", 8, "if total >= 11:"),
        ("deleted-statement", 7, "pass"),
        ("unwritten-output", 9, "pass"),
        ("deleted-statement", 10, "pass"),
        ("constant", 10, "return 1"),
        ("deleted-statement", 13, "pass"),
        ("early-exit", 7, "raise SystemExit(0)  # mutant: early exit"),
        ("early-exit", 13, "raise SystemExit(0)  # mutant: early exit"),
    }


def test_docstrings_and_texts_are_never_mutated() -> None:
    for each in python_candidates("x.py", PYTHON):
        assert each.text is not None
        assert '"""Doc 1."""' in each.text and '"""Doc 2."""' in each.text
        assert '"out.txt", "w"' in each.text or each.operator == "unwritten-output"


def test_a_script_python_cannot_read_has_no_mutant() -> None:
    assert list(python_candidates("x.py", "def broken(:\n")) == []


SHELL = """#!/bin/bash
set -eu
# counts the lines
count=$(wc -l < "$1" | head -n 1)
if [ "$count" -gt 3 ]; then
  echo $((count + 1)) > "$OUTPUT_DIR/count.txt"
fi
"""


def test_the_shell_operators_work_line_by_line() -> None:
    found = list(shell_candidates("count.sh", SHELL))
    assert _changes(found, SHELL) == {
        ("deleted-statement", 2, "(line removed)"),
        ("swapped-call", 4, 'count=$(wc -l < "$1" | tail -n 1)'),
        ("constant", 4, 'count=$(wc -l < "$1" | head -n 0)'),
        ("deleted-statement", 4, "(line removed)"),
        ("comparison", 5, 'if [ "$count" -ge 3 ]; then'),
        ("constant", 5, 'if [ "$count" -gt 4 ]; then'),
        ("arithmetic", 6, 'echo $((count - 1)) > "$OUTPUT_DIR/count.txt"'),
        ("constant", 6, 'echo $((count + 0)) > "$OUTPUT_DIR/count.txt"'),
        ("unwritten-output", 6, "(line removed)"),
        ("early-exit", 4, "exit 0  # mutant: early exit"),
    }


def test_the_skill_md_operators_on_the_fixture_skill() -> None:
    skill = Skill.load(FIXTURES / SKILL)
    found = [each for each in candidates(skill) if each.file == "SKILL.md"]
    text = (FIXTURES / SKILL / "SKILL.md").read_text(encoding="utf-8")
    changes = _changes(found, text)
    assert ("dropped-constraint", 14, "(line removed)") in changes
    assert ("deleted-step", 11, "(line removed)") in changes
    assert ("deleted-step", 12, "(line removed)") in changes
    assert ("changed-command", 18, "python3 scripts/total_old.py") in changes
    assert ("broken-link", 16, "The discount rules are in [the discount policy]"
            "(docs/discounts-moved.md).") in changes
    assert ("narrowed-description", 3, 'description: "Totals an order CSV with a discount on'
            ' large orders and writes the total as JSON."') in changes
    assert ("truncated-description", 3, 'description: "Totals an order CSV with a discount on'
            ' large orders and writes the total as JSON. Use when the user "') in changes
    [removed] = [each for each in candidates(skill) if each.operator == "removed-doc"]
    assert (removed.file, removed.text) == ("docs/discounts.md", None)


def test_every_operator_is_documented() -> None:
    skill = Skill.load(FIXTURES / SKILL)
    made = {each.operator for each in candidates(skill)}
    assert made <= set(OPERATORS)
    assert all(OPERATORS[name][1] for name in OPERATORS)


def test_the_mutants_are_the_same_for_a_skill_and_seed_and_differ_across_seeds() -> None:
    skill = Skill.load(FIXTURES / SKILL)
    first = mutants_of(skill, seed=3, max_mutants=10)
    assert first == mutants_of(Skill.load(FIXTURES / SKILL), seed=3, max_mutants=10)
    assert [m.id for m in first] == [f"M{n:02d}" for n in range(1, 11)]
    others = {(m.operator, m.file, m.line, m.text) for m in mutants_of(skill, 4, 10)}
    assert others != {(m.operator, m.file, m.line, m.text) for m in first}


def test_the_cap_takes_mutants_from_every_operator_in_turn() -> None:
    skill = Skill.load(FIXTURES / SKILL)
    operators = {each.operator for each in candidates(skill)}
    chosen = mutants_of(skill, seed=0, max_mutants=len(operators))
    assert Counter(m.operator for m in chosen) == Counter(operators)
    assert len(mutants_of(skill, seed=0, max_mutants=1000)) == len(candidates(skill))


def test_each_mutant_carries_its_unified_diff() -> None:
    skill = Skill.load(FIXTURES / SKILL)
    [removed] = [m for m in mutants_of(skill, 0, 1000) if m.operator == "removed-doc"]
    assert removed.diff == (
        "--- a/docs/discounts.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-# Discounts\n-\n"
        "-An order of 100 or more gets 10% off its total.\n"
    )


def test_a_skill_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\nbody\n")
    (tmp_path / "scripts" / "run.py").write_bytes(b"\xff\xfe")
    with pytest.raises(MutateError, match=r"scripts/run.py: cannot read the file to mutate"):
        candidates(Skill.load(tmp_path))


def test_docs_mutation_md_lists_every_operator_with_its_target() -> None:
    text = (Path(__file__).parents[2] / "docs" / "mutation.md").read_text(encoding="utf-8")
    for name in OPERATORS:
        assert f"| `{name}` |" in text, name
    assert {target for target, _what in OPERATORS.values()} == {
        "script", "body", "docs", "description"
    }
