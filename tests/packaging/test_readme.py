"""The README keeps its promises: the two set-up commands first, and a settings table that
matches the plugin's flags, ini options and defaults as `pytest --help` shows them."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agent_skills import settings

README = Path(__file__).resolve().parents[2] / "README.md"
BEGIN = "<!-- settings-table:begin"
END = "<!-- settings-table:end -->"


def readme_table() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(BEGIN) : text.index(END)]
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


@pytest.fixture(scope="module")
def pytest_help(tmp_path_factory: pytest.TempPathFactory) -> str:
    empty = tmp_path_factory.mktemp("help")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--help"],
        cwd=empty,
        env={**os.environ, "COLUMNS": "2000"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()[1:] if line.strip()]
    assert commands == ["bash scripts/example.sh", "bash scripts/test.sh"]
    ci_run = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash scripts/test.sh" in ci_run


def test_the_settings_table_is_the_generated_one() -> None:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(BEGIN) : text.index(END)]
    table = block[block.index("\n") + 1 :]
    assert table == settings.markdown_table(settings.load_all())


@pytest.mark.parametrize("row", readme_table(), ids=lambda row: row[0].strip("`"))
def test_every_documented_flag_exists_with_its_ini_twin_and_default(
    row: list[str], pytest_help: str
) -> None:
    flag, ini, _environment, default, _meaning = (cell.strip("`") for cell in row)
    flag_help = re.search(
        rf"^  {re.escape(flag)}(?=[\s=]).*?(?=^  -|^\S|\Z)", pytest_help, re.M | re.S
    )
    assert flag_help, f"{flag} is not in pytest --help"
    described = " ".join(flag_help.group(0).split())
    assert f"ini: {ini};" in described
    assert f"default: {default})" in described
    assert re.search(rf"^\s+{re.escape(ini)} \(", pytest_help, re.M), f"ini {ini} not in --help"
