"""Differential check against skills-ref 0.1.1 (the spec's reference validator).

Our error / no-error verdict must equal skills-ref's for every skill, except the
divergences documented in docs/rules.md, which this test reads: an undocumented
divergence fails, and so does a documented one that no longer diverges.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_agent_skills.repository import find_skill_dirs
from pytest_agent_skills.rules import ValidationOptions, validate
from pytest_agent_skills.skill import Skill, SkillNotFoundError
from tests.support.corpus import CORPUS

if sys.version_info < (3, 11):
    pytest.skip(
        "skills-ref 0.1.1 needs Python >= 3.11 (the test extra installs it there only)",
        allow_module_level=True,
    )
# Where the test extra installs it, it must be there: no silent skip.
skills_ref_validator = importlib.import_module("skills_ref.validator")

REPO = Path(__file__).resolve().parents[2]
RULES_DOC = REPO / "docs" / "rules.md"
#: The corpus has its code files stripped, so references to scripts are missing there by
#: construction (docs/rules.md, Decisions); every other rule runs at its default severity.
CORPUS_OPTIONS = ValidationOptions.build(severities=["reference-missing=off"])

VALID = "---\nname: x\ndescription: Does x. Use when x.\n---\nBody.\n"

#: Cases where the verdicts differ; each must have a row in docs/rules.md "By case".
CASES: dict[str, tuple[str, str | bytes | None]] = {
    "unicode-name": ("café", "---\nname: café\ndescription: D.\n---\nBody.\n"),
    "padded-name": ("x", "---\nname: ' x '\ndescription: D.\n---\nBody.\n"),
    "typed-yaml-value": ("x", "---\nname: x\ndescription: yes\n---\nBody.\n"),
    "nested-metadata": (
        "x",
        "---\nname: x\ndescription: D.\nmetadata:\n  owner:\n    team: t\n---\nBody.\n",
    ),
    "list-allowed-tools": (
        "x",
        "---\nname: x\ndescription: D.\nallowed-tools:\n  - Read\n---\nBody.\n",
    ),
    "empty-compatibility": ("x", "---\nname: x\ndescription: D.\ncompatibility: ''\n---\nBody.\n"),
    "empty-license": ("x", "---\nname: x\ndescription: D.\nlicense:\n---\nBody.\n"),
    "fence-trailing-space": ("x", "---\nname: x\ndescription: D.\n--- \nBody.\n"),
    "flow-yaml": ("x", "---\nname: x\ndescription: D.\nmetadata: {a: b}\n---\nBody.\n"),
    "non-utf8": ("x", b"---\nname: x\ndescription: caf\xe9\n---\nBody.\n"),
    "lowercase-skill-md": ("x", None),
    "validate-dot": ("x", VALID),
    "missing-reference": ("x", "---\nname: x\ndescription: D.\n---\nRun scripts/run.py.\n"),
}

#: Cases where both validators agree (not documented: no divergence).
AGREEMENTS: dict[str, tuple[str, str, str]] = {
    "valid": ("x", VALID, "valid"),
    "bom": ("x", "\ufeff" + VALID, "error"),
    "leading-blank-line": ("x", "\n" + VALID, "error"),
    "unclosed": ("x", "---\nname: x\ndescription: D.\n", "error"),
    "empty-front-matter": ("x", "---\n---\nBody.\n", "error"),
    "duplicate-key": ("x", "---\nname: x\nname: x\ndescription: D.\n---\n", "error"),
    "not-a-mapping": ("x", "---\n- a\n---\n", "error"),
    "unknown-field": ("x", "---\nname: x\ndescription: D.\nversion: 1\n---\n", "error"),
    "claude-code-field": ("x", "---\nname: x\ndescription: D.\nwhen_to_use: x\n---\n", "error"),
    "missing-name": ("x", "---\ndescription: D.\n---\n", "error"),
    "missing-description": ("x", "---\nname: x\n---\n", "error"),
    "uppercase-name": ("X", "---\nname: X\ndescription: D.\n---\n", "error"),
    "double-hyphen": ("a--b", "---\nname: a--b\ndescription: D.\n---\n", "error"),
    "trailing-hyphen": ("a-", "---\nname: a-\ndescription: D.\n---\n", "error"),
    "long-name": ("a" * 65, f"---\nname: {'a' * 65}\ndescription: D.\n---\n", "error"),
    "folder-mismatch": ("folder", VALID, "error"),
    "long-description": ("x", f"---\nname: x\ndescription: {'d' * 1025}\n---\n", "error"),
    "description-1024": ("x", f"---\nname: x\ndescription: {'d' * 1024}\n---\n", "valid"),
    "long-compatibility": (
        "x",
        f"---\nname: x\ndescription: D.\ncompatibility: {'c' * 501}\n---\n",
        "error",
    ),
    "full-spec-fields": (
        "x",
        "---\nname: x\ndescription: D.\nlicense: MIT\ncompatibility: git\n"
        "metadata:\n  author: me\n  version: '1.0'\nallowed-tools: Bash(git:*) Read\n---\nBody.\n",
        "valid",
    ),
    "metadata-number": (
        "x",
        "---\nname: x\ndescription: D.\nmetadata:\n  version: 1.5\n---\n",
        "valid",
    ),
    "reserved-word": ("claude-x", "---\nname: claude-x\ndescription: D.\n---\nBody.\n", "valid"),
    "long-body": ("x", VALID + "line\n" * 600, "valid"),
    # The tRPC runtime's Tools: section is read under the trpc profile only.
    "tools-section": ("x", "---\nname: x\ndescription: D.\n---\nTools:\n- a  # note\n", "valid"),
}


@dataclass(frozen=True)
class Divergence:
    key: str
    skills_ref: str
    ours: str
    case: str


def documented(heading: str) -> dict[str, Divergence]:
    """Rows of the Markdown table under ``heading`` in docs/rules.md: first column -> verdicts."""
    lines = RULES_DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    rows: dict[str, Divergence] = {}
    header: list[str] | None = None
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= {"-", " "}:
            continue
        row = dict(zip(header, cells, strict=True))
        verdicts = row["skills-ref"].split()[0], row["ours"].split()[0]
        rows[cells[0]] = Divergence(cells[0], *verdicts, case=row.get("case", cells[0]))
    return rows


def ours(directory: Path, options: ValidationOptions | None = None) -> str:
    try:
        skill = Skill.load(directory)
    except SkillNotFoundError:
        return "error"
    findings = validate(skill, options or ValidationOptions())
    return "error" if any(finding.is_error for finding in findings) else "valid"


def skills_ref(directory: Path) -> str:
    try:
        errors = skills_ref_validator.validate(directory)
    except Exception:  # skills-ref raises on some inputs (e.g. non-UTF-8): that is its verdict
        return "crashes"
    return "error" if errors else "valid"


def make_case(tmp_path: Path, folder: str, text: str | bytes | None) -> Path:
    directory = tmp_path / folder
    directory.mkdir()
    if text is None:
        (directory / "skill.md").write_text(VALID, encoding="utf-8")
    elif isinstance(text, bytes):
        (directory / "SKILL.md").write_bytes(text)
    else:
        (directory / "SKILL.md").write_text(text, encoding="utf-8")
    return directory


def both(directory: Path, case: str) -> tuple[str, str]:
    if case == "validate-dot":
        cwd = os.getcwd()
        os.chdir(directory)
        try:
            return skills_ref(Path(".")), ours(Path("."))
        finally:
            os.chdir(cwd)
    return skills_ref(directory), ours(directory)


def test_every_case_is_documented_and_every_documented_case_is_tested() -> None:
    assert sorted(documented("### By case")) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_documented_divergence(tmp_path: Path, case: str) -> None:
    folder, text = CASES[case]
    row = documented("### By case")[case]
    assert both(make_case(tmp_path, folder, text), case) == (row.skills_ref, row.ours)
    assert row.skills_ref != row.ours


@pytest.mark.parametrize("case", sorted(AGREEMENTS))
def test_same_verdict(tmp_path: Path, case: str) -> None:
    folder, text, verdict = AGREEMENTS[case]
    assert both(make_case(tmp_path, folder, text), case) == (verdict, verdict)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"public skills corpus not found at {CORPUS}")
def test_corpus_verdicts_match_except_documented() -> None:
    directories = sorted(find_skill_dirs(CORPUS))
    assert len(directories) >= 100, "the corpus should hold the public skills (144 in 2026)"
    diverging = {}
    for directory in directories:
        theirs, mine = skills_ref(directory), ours(directory, CORPUS_OPTIONS)
        if theirs != mine:
            key = directory.relative_to(CORPUS).as_posix()
            diverging[key] = (theirs, mine)
    table = documented("### In the public corpus")
    assert diverging == {key: (row.skills_ref, row.ours) for key, row in table.items()}
    cases = documented("### By case")
    for row in table.values():
        assert row.case in cases, f"{row.key}: the case {row.case!r} is not in the 'By case' table"
        assert (cases[row.case].skills_ref, cases[row.case].ours) == (row.skills_ref, row.ours)
