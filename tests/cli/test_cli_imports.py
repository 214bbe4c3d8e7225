"""The subcommands that are not about pytest import neither pytest nor the pytest glue: a
pre-commit hook or a CI step pays only for what it runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.skill_files import write_skill

REPO_ROOT = Path(__file__).resolve().parents[2]


def imported_modules(*arguments: str, cwd: Path) -> list[str]:
    """Every module ``agent-skills ARGUMENTS`` imports, as ``-X importtime`` lists them."""
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SKILLS_")},
        "PYTHONPATH": str(REPO_ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pytest_agent_skills.cli", *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return [
        line.rpartition("|")[2].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


def pytest_or_glue(modules: list[str]) -> list[str]:
    return [
        name
        for name in modules
        if name in ("pytest", "_pytest", "py", "pluggy")
        or name.startswith(("pytest.", "_pytest.", "pluggy.", "pytest_agent_skills.glue"))
        or name == "pytest_agent_skills.plugin"
    ]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository with a configuration in each of pytest's files and a few skills."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.pytest.ini_options]\nskills_profile = "claude-code"\n'
    )
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "pytest.ini").write_text("[pytest]\nskills_profile = spec\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "setup.cfg").write_text("[tool:pytest]\nskills_profile = spec\n")
    write_skill(tmp_path / "skills", "good", files={"docs/guide.md": "# Guide\n"})
    write_skill(tmp_path / "skills", "Bad_Name")
    write_skill(tmp_path / "nested", "inner")
    write_skill(tmp_path / "other", "third")
    return tmp_path


@pytest.mark.parametrize(
    "arguments",
    [
        ("validate",),
        ("validate", "skills", "nested/inner", "other/third/SKILL.md"),
        ("validate", "--format", "sarif", "skills"),
        ("validate", "--format", "json", "skills"),
        ("rules",),
        ("rule", "name-charset"),
        ("--version",),
    ],
    ids=" ".join,
)
def test_a_subcommand_not_about_pytest_imports_no_pytest_and_no_glue(
    repository: Path, arguments: tuple[str, ...]
) -> None:
    modules = imported_modules(*arguments, cwd=repository)
    assert "pytest_agent_skills" in modules
    assert pytest_or_glue(modules) == []


def test_the_import_check_sees_pytest_when_it_is_imported(repository: Path) -> None:
    # The check above would pass on an empty list: it must find pytest where it is imported.
    modules = imported_modules("validate", "skills", cwd=repository)
    assert "pytest_agent_skills.rules._validate" in modules
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pytest_agent_skills.plugin"],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    names = [line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "pytest" in pytest_or_glue(names)


def test_a_validation_in_one_process_loads_nothing_for_sharing_it_out(repository: Path) -> None:
    # Pickling a child's results and wording its traceback cost a run ~6 ms to import: only a
    # run that forks loads them (here: four skills, fewer than are ever shared out).
    modules = imported_modules("validate", "--jobs", "2", "skills", cwd=repository)
    assert "pytest_agent_skills.rules._split" in modules
    assert [name for name in modules if name in ("pickle", "traceback", "signal")] == []
