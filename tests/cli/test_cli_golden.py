"""`agent-skills validate` output pinned byte for byte: text, JSON and SARIF of one small
repository whose skills trip most kinds of finding, written by the program as a whole process.

The expected outputs live in ``tests/fixtures/cli/golden/``.  A deliberate change of the
output is re-recorded with ``PYTEST_AGENT_SKILLS_UPDATE_GOLDEN=1 pytest tests/cli`` and the
difference read in ``git diff`` before it is committed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pytest_agent_skills
from tests.support.cli import failing_report
from tests.support.skill_files import write_skill

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "cli" / "golden"
UPDATE = os.environ.get("PYTEST_AGENT_SKILLS_UPDATE_GOLDEN") == "1"
FORMATS = {"text": "report.txt", "json": "report.json", "sarif": "report.sarif.json"}


def write_repository(root: Path) -> None:
    """Skills as a real repository holds them: a clean one, bad names, unknown fields, links
    to files that exist (one through a folder named with dots) and do not, an example path in
    prose, a fragment without front matter, an empty body, an inline ignore."""
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    skills = root / "skills"
    write_skill(
        skills,
        "csv-summary",
        body="Read [the guide](docs/guide.md), then run `python scripts/summarise.py`.\n",
        files={"docs/guide.md": "# Guide\n", "scripts/summarise.py": "print('ok')\n"},
    )
    write_skill(skills, "Bad_Name", front="name: Bad_Name\ndescription: Breaks. Use never.\n")
    write_skill(
        skills,
        "extra-fields",
        front="name: extra-fields\ndescription: Has extras. Use for extras.\nauthor: me\n"
        "metadata:\n  tags: [a, b]\n",
    )
    write_skill(
        skills,
        "links",
        body="See [the API](references/v1.2.3/api.md) and [the old notes](reference/notes.md).\n"
        "\nRun `bash scripts/missing.sh` first.\n\n"
        "**Example**: `scripts/rotate_pdf.py` shows how a script is named.\n",
        files={"references/v1.2.3/api.md": "# API\n"},
    )
    write_skill(skills, "warned", front="name: warned\ndescription: Warns. Use to warn.\n", body="")
    write_skill(
        skills,
        "ignored",
        front="name: ignored\ndescription: Ignores one finding. Use to ignore.\nauthor: me\n",
        body="<!-- agent-skills: ignore field-unknown -->\nRun the steps.\n",
    )
    fragment = skills / "flavours" / "fragment"
    fragment.mkdir(parents=True)
    (fragment / "SKILL.md").write_text("# A fragment without front matter\n", encoding="utf-8")


def validate(root: Path, form: str) -> str:
    text = failing_report("--format", form, "skills", cwd=root).decode("utf-8")
    # What depends on the machine: where the repository lies, the package's version.
    text = text.replace(root.resolve().as_uri(), "file:///REPOSITORY")
    return text.replace(f'"{pytest_agent_skills.__version__}"', '"VERSION"')


@pytest.mark.parametrize("form", sorted(FORMATS))
def test_the_report_is_byte_for_byte_the_recorded_one(tmp_path: Path, form: str) -> None:
    write_repository(tmp_path)
    produced = validate(tmp_path, form)
    golden = GOLDEN / FORMATS[form]
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(produced.encode("utf-8"))
    expected = golden.read_bytes().decode("utf-8")
    assert produced == expected, (
        f"the {form} report differs from {golden.relative_to(GOLDEN.parents[2])};"
        " if the change is meant, re-record with PYTEST_AGENT_SKILLS_UPDATE_GOLDEN=1"
    )
