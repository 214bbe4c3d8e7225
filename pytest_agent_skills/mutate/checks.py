"""What runs against a mutant: a :class:`Suite` of named checks, each run against a skill
folder (the original, or a mutant's copy in its place).  :class:`ScenarioSuite` replays the
scenarios that offer the skill; :mod:`.pytest_suite` runs the repository's pytest."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import AgentSkillsError
from ..filenames import SCENARIO_SUFFIX, SKILL_FILE
from .operators import MutateError

if TYPE_CHECKING:
    from ..config.runtimes import RuntimeOptions
    from ..harness.run_settings import RunSettings
    from ..repository import SkillRepository
    from ..scenario import Scenario
    from ..workspace import Runtime

#: Folders the search for scenario files does not enter.
SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist",
})


@dataclass(frozen=True)
class Failure:
    """A check that failed: what failed (a scenario, a test's node id) and why (one line)."""

    check: str
    why: str


class CheckError(Exception):
    """A check that could not judge a mutant (its runs failed): the mutant is an error."""


class Suite(Protocol):
    """Named checks, each run against a skill folder in place of the skill."""

    #: What each check is called in the report (``killed_by``).
    names: Sequence[str]

    def place(self, work: Path) -> None:
        """Where the checks may write (the run's temporary folder, removed after it)."""

    def spent(self) -> tuple[int, int]:
        """Model requests this process's checks made, and those stopping early saved."""

    def run(self, index: int, folder: Path) -> Failure | None:
        """Run check ``index`` with ``folder`` in place of the skill: None when it passes."""


@dataclass(frozen=True)
class ScenarioCheck:
    """A scenario that offers the skill, and the skill roots its repository is made of."""

    scenario: Scenario
    roots: tuple[Path, ...]
    name: str


class ScenarioSuite:
    """The scenarios that offer the skill (its own ``evals/*.scenario.yaml`` first), replayed
    offline with their scripted model or cassette, the skill's folder swapped for the one a
    run is given."""

    def __init__(
        self,
        skill_dir: Path,
        checks: Sequence[ScenarioCheck],
        run_settings: RunSettings,
        runtimes: RuntimeOptions,
    ) -> None:
        self.skill_dir = skill_dir.resolve()
        self.checks = tuple(checks)
        self.names: Sequence[str] = tuple(check.name for check in checks)
        self.run_settings = run_settings
        self.runtimes = runtimes
        self._made: dict[str, Runtime] = {}

    def place(self, work: Path) -> None:
        """The workspaces of the conversations go under ``work`` (a process killed at its
        deadline or by Ctrl-C cannot remove its own), and the default runtime is made once,
        before the processes that use it fork."""
        workspaces = work / "workspaces"
        workspaces.mkdir()
        self.runtimes = self.runtimes._replace(work_root=workspaces)
        self._made.clear()
        self._runtime(self.runtimes.default)

    def spent(self) -> tuple[int, int]:
        return 0, 0  # scripted or replayed: no model request

    def run(self, index: int, folder: Path) -> Failure | None:
        from ..harness.runner import run_conversation

        check = self.checks[index]
        try:
            repository = self._repository(check, folder)
            conversation = check.scenario.conversation(repository, f"scenario {check.name}")
            kind = check.scenario.runtime or self.runtimes.default
            settings = replace(self.run_settings, runtime=self._runtime(kind))
            run_conversation(conversation, settings=settings)
        except AgentSkillsError as error:
            return Failure(check.name, first_line(error))
        return None

    def _repository(self, check: ScenarioCheck, folder: Path) -> SkillRepository:
        from ..repository import SkillRepository
        from ..skill import Skill

        repository = SkillRepository(check.roots)
        if folder.resolve() == self.skill_dir:
            return repository
        others = [
            skill for skill in repository.skills() if skill.directory.resolve() != self.skill_dir
        ]
        return SkillRepository.from_skills([Skill.load(folder), *others])

    def _runtime(self, kind: str) -> Runtime:
        if kind not in self._made:
            self._made[kind] = self.runtimes.create(kind)
        return self._made[kind]


def first_line(error: BaseException) -> str:
    """An error's type and the first line of its message."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def scenario_checks(
    skill_dir: Path, base_dir: Path, configured_roots: Sequence[str]
) -> list[ScenarioCheck]:
    """The scenarios that offer the skill in ``skill_dir``: its own ``evals/`` first, then
    every scenario file under ``base_dir`` (the configuration's folder) and the configured
    roots whose skill roots hold the skill.  A scenario file that does not load is an error
    (pytest would fail to collect it too)."""
    from ..scenario import ScenarioError, load_scenarios

    skill = skill_dir.resolve()
    roots = [(base_dir / spec) for spec in configured_roots if "://" not in spec]
    files = sorted(
        {
            path.resolve()
            for start in (skill_dir / "evals", base_dir, *roots)
            for path in _scenario_files(start)
        },
        key=lambda path: (not path.is_relative_to(skill), str(path)),
    )
    checks: list[ScenarioCheck] = []
    for path in files:
        try:
            scenarios = load_scenarios(path)
        except ScenarioError as error:
            raise MutateError(f"{error} (a scenario file near the skill must load)") from None
        for scenario in scenarios:
            scenario_roots = _roots_of(scenario, roots)
            if any(skill.is_relative_to(root.resolve()) for root in scenario_roots):
                shown = os.path.relpath(path, base_dir.resolve())
                checks.append(
                    ScenarioCheck(
                        scenario, tuple(scenario_roots),
                        f"{shown}:{scenario.line} {scenario.name}",
                    )
                )
    return checks


def _roots_of(scenario: Scenario, configured: Sequence[Path]) -> list[Path]:
    """The local skill roots a scenario's repository is made of, as the pytest glue makes it
    (``skills:`` from the file's folder, else the configured roots and the enclosing skill)."""
    if scenario.skills is not None:
        return [
            scenario.directory / spec for spec in scenario.skills
            if "://" not in spec and (scenario.directory / spec).is_dir()
        ]
    found = [root for root in configured if root.is_dir()]
    for candidate in (scenario.directory, *scenario.directory.parents):
        if (candidate / SKILL_FILE).is_file():
            found.append(candidate)
            break
    return found


def _scenario_files(start: Path) -> Iterator[Path]:
    if not start.is_dir():
        return
    for folder, subfolders, names in os.walk(start):
        subfolders[:] = sorted(name for name in subfolders if name not in SKIPPED_FOLDERS)
        for name in sorted(names):
            if name.endswith(SCENARIO_SUFFIX):
                yield Path(folder) / name
