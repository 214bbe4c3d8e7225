"""Write skill folders: real files (the tests' ``tests/support/skill_files.py`` builds its
special skills on :func:`write_skill`)."""

from __future__ import annotations

from pathlib import Path

VALID_FRONT = (
    "name: {name}\ndescription: Summarises CSV files. Use when the user asks about a CSV.\n"
)


def write_skill(
    root: Path,
    name: str = "csv-summary",
    front: str | None = None,
    body: str = "Run the steps.\n",
    files: dict[str, str] | None = None,
) -> Path:
    """``root/name/SKILL.md`` with ``front`` between fences (default: a valid one)."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    front_text = VALID_FRONT.format(name=name) if front is None else front
    (directory / "SKILL.md").write_text(f"---\n{front_text}---\n{body}", encoding="utf-8")
    for relative, content in (files or {}).items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return directory
