"""A skill repository for mutation runs: the fixture skill ``order-total`` and one of its two
scenario suites (``strong``: the listing, the loaded body, the output file and stdout;
``weak``: the calls only), and what a folder holds, byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mutation"
SKILL = "order-total"


def mutation_project(root: Path, suite: str) -> Path:
    """``root`` made a repository: a pytest configuration, the skill, and ``suites/<suite>/``
    whose scenarios offer the skill (``skills: ../../order-total``)."""
    shutil.copytree(FIXTURES / SKILL, root / SKILL)
    shutil.copytree(FIXTURES / "suites" / suite, root / "suites" / suite)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    return root


def folder_bytes(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file and folder under ``folder``: its mode and its bytes (a folder's: empty)."""
    found: dict[str, tuple[int, bytes]] = {}
    for path in sorted(folder.rglob("*")):
        data = path.read_bytes() if path.is_file() else b""
        found[path.relative_to(folder).as_posix()] = (path.lstat().st_mode, data)
    return found


def mutate_process(
    *arguments: str, cwd: Path, tmp: Path
) -> subprocess.Popen[bytes]:
    """``agent-skills mutate ARGUMENTS`` started as its own process in ``cwd``, its temporary
    files under ``tmp``, none of the caller's ``SKILLS_*`` variables."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SKILLS_")}
    environment.update(TMPDIR=str(tmp), LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_agent_skills.cli", "mutate", *arguments],
        cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
