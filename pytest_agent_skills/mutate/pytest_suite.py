"""``agent-skills mutate --pytest ARGS``: the repository's own pytest run is the check.  The
repository is copied once into the run's temporary folder; each run gets a copy of that copy
made of hard links (cheap, and the user's files are never among them) with the skill's folder
replaced by the mutant's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .checks import SKIPPED_FOLDERS, Failure
from .operators import MutateError

#: What pytest is always given: no cache written into the copy, the failures listed.
PYTEST_BASE_ARGS = ("-q", "-p", "no:cacheprovider", "-rfE")


class PytestSuite:
    """One check: ``python -m pytest ARGS`` in a copy of the repository."""

    def __init__(self, repository: Path, skill: Path, args: Sequence[str]) -> None:
        self.repository = repository.resolve()
        self.skill = skill.resolve().relative_to(self.repository)
        self.args = tuple(args)
        self.names: Sequence[str] = (" ".join(("pytest", *self.args)),)
        self.master: Path | None = None

    @classmethod
    def for_skill(cls, skill_dir: Path, repository: Path, args: Sequence[str]) -> PytestSuite:
        if not skill_dir.resolve().is_relative_to(repository.resolve()):
            raise MutateError(
                f"{skill_dir}: --pytest runs the repository's tests, and this skill is not"
                f" inside the repository {repository} (the folder of its pytest configuration)"
            )
        return cls(repository, skill_dir, args)

    def place(self, work: Path) -> None:
        self.master = work / "repository"
        shutil.copytree(
            self.repository, self.master, symlinks=True,
            ignore=shutil.ignore_patterns(*SKIPPED_FOLDERS),
        )

    def spent(self) -> tuple[int, int]:
        return 0, 0  # the tests' own requests are theirs: not counted

    def run(self, index: int, folder: Path) -> Failure | None:
        assert self.master is not None, "place() first"
        if folder.resolve() == self.repository / self.skill:
            return self._pytest(self.master)
        tree = folder.parent / "repository"
        shutil.copytree(self.master, tree, symlinks=True, copy_function=os.link)
        shutil.rmtree(tree / self.skill)
        shutil.copytree(folder, tree / self.skill, symlinks=True)
        return self._pytest(tree)

    def _pytest(self, tree: Path) -> Failure | None:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *PYTEST_BASE_ARGS, *self.args],
            cwd=tree, capture_output=True, text=True, check=False,
        )
        if done.returncode == 0:
            return None
        lines = done.stdout.splitlines()
        failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
        if failed:
            test = failed[0].split(" ", 1)[1].split(" - ", 1)
            return Failure(test[0], test[1] if len(test) > 1 else failed[0])
        last = (lines or done.stderr.strip().splitlines() or [""])[-1]
        return Failure(self.names[0], f"pytest exited with {done.returncode}: {last}")
