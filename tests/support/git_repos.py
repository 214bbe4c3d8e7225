"""Git repositories of skills for the tests of ``--changed-since`` and ``--baseline git:REF``:
real ``git`` processes in a temporary folder, with an identity of their own and no user
configuration read."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.skill_files import write_skill

#: git with no global or system configuration, a fixed identity and dates.
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(repository: Path, *arguments: str) -> str:
    """``git ARGUMENTS`` in ``repository``; its standard output (it must succeed)."""
    done = subprocess.run(
        ["git", "-C", str(repository), *arguments],
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def commit_all(repository: Path, message: str) -> str:
    """Commit every file of the work tree; the new commit's id."""
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "--allow-empty", "-m", message)
    return git(repository, "rev-parse", "HEAD").strip()


def skills_repository(repository: Path, count: int) -> list[Path]:
    """A git repository at ``repository`` holding ``count`` valid skills under ``skills/``
    (``skill-000`` ...), committed once; their folders."""
    repository.mkdir(parents=True, exist_ok=True)
    git(repository, "init", "-q", "-b", "main")
    folders = [write_skill(repository / "skills", f"skill-{index:03d}") for index in range(count)]
    commit_all(repository, "skills")
    return folders
