"""Write skill folders for tests: real files in a temporary directory."""

from __future__ import annotations

from pathlib import Path

# A skill folder is what the bench scripts write too: its one home is bench's.
from bench.support.skill_files import VALID_FRONT as VALID_FRONT
from bench.support.skill_files import write_skill as write_skill


def write_linked_docs_skill(root: Path, name: str = "style-guide") -> Path:
    """A skill whose ``docs`` and ``references`` are relative links to folders of the skill
    itself (``docs -> shared/docs``, ``references -> ../<name>/shared/refs``), as a skill
    sharing one folder under two names is laid out.  SKILL.md names a doc through the link
    and its sibling by its real path; the doc links that sibling by its short name."""
    body = (
        "Read [the guide](docs/guide.md) and [the checklist](shared/docs/checklist.md), then"
        " [the API notes](references/api.md).\n\nRun `python docs/lint.py` on the draft.\n"
    )
    files = {
        "shared/docs/guide.md": "# Guide\n\nEnd with [the checklist](checklist.md).\n",
        "shared/docs/checklist.md": "# Checklist\n",
        "shared/docs/lint.py": "print('ok')\n",
        "shared/refs/api.md": "# API\n",
    }
    skill = write_skill(root, name, body=body, files=files)
    (skill / "docs").symlink_to("shared/docs", target_is_directory=True)
    (skill / "references").symlink_to(f"../{name}/shared/refs", target_is_directory=True)
    return skill


def write_linked_repository(root: Path) -> None:
    """A plugin repository whose folders link as real ones do: ``plugins/uipath -> ..`` (back
    to the repository's root), ``plugins/shared -> ../skills`` (a second way to its skills) and
    ``plugins/pdf -> ../.vendor/pdf`` (the only way to a skill in a dot-folder).  Of the three
    skills, ``broken`` fails (its name is not a valid one)."""
    write_skill(root / "skills", "alpha")
    write_skill(root / "skills", "broken", front="name: Broken\ndescription: Breaks. Use never.\n")
    write_skill(root / ".vendor", "pdf")
    plugins = root / "plugins"
    plugins.mkdir()
    (plugins / "uipath").symlink_to("..", target_is_directory=True)
    (plugins / "shared").symlink_to("../skills", target_is_directory=True)
    (plugins / "pdf").symlink_to("../.vendor/pdf", target_is_directory=True)


def copies_for_shares(shares: int) -> int:
    """How many :func:`write_copies` copies (seven skills each) give ``shares`` processes of a
    forked validation their least share of skills each."""
    from pytest_agent_skills.rules._split import SHARE_AT_LEAST

    return -(-shares * SHARE_AT_LEAST // 7)


def write_copies(root: Path, copies: int) -> None:
    """``copies`` folders of seven skills each: clean, badly named, with unknown fields (ignored
    by a per-path ignore in ``copy-1``), with missing references and an example path, with an
    ignore comment, a fragment without front matter; every copy's names clash with the first's."""
    for copy in range(copies):
        folder = root / f"copy-{copy}"
        write_skill(folder, "csv-summary", body="Read [the guide](docs/guide.md).\n",
                    files={"docs/guide.md": "# Guide\n"})
        write_skill(folder, "Bad_Name", front="name: Bad_Name\ndescription: Breaks. Use never.\n")
        write_skill(folder, "extra-fields", front="name: extra-fields\ndescription: Has extras."
                    " Use for extras.\nauthor: me\n")
        write_skill(folder, "links", body="See [the notes](reference/notes.md).\n\nRun `bash"
                    " scripts/missing.sh`.\n\n**Example**: `scripts/rotate_pdf.py`.\n")
        write_skill(folder, "ignored", front="name: ignored\ndescription: Ignores. Use to"
                    " ignore.\nauthor: me\n",
                    body="<!-- agent-skills: ignore field-unknown -->\nRun the steps.\n")
        write_skill(folder, "warned", front="name: warned\ndescription: Warns. Use to warn.\n",
                    body="")
        fragment = folder / "fragment"
        fragment.mkdir()
        (fragment / "SKILL.md").write_text("# A fragment\n", encoding="utf-8")
