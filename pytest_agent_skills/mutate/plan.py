"""One mutation run from settings to report, without pytest or argparse: the library API
the command and the pytest items share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigurationError
from ..settings import REGISTRY, SettingValues
from .operators import MutateError

if TYPE_CHECKING:
    from .checks import Suite
    from .report import MutationReport
    from .runner import MutationRun, RunLimits


@dataclass(frozen=True)
class MutationPlan:
    """What to mutate and what runs against each mutant: the scenarios (``pytest_args``
    None) or the repository's pytest run with ``pytest_args``."""

    skill_dir: Path
    values: SettingValues
    seed: int
    max_mutants: int
    limits: RunLimits
    min_score: float | None
    pytest_args: tuple[str, ...] | None = None

    @classmethod
    def from_settings(
        cls, skill_dir: Path, values: SettingValues, pytest_args: Sequence[str] | None = None
    ) -> MutationPlan:
        from .runner import RunLimits

        if not (skill_dir / "SKILL.md").is_file():
            raise MutateError(f"{skill_dir}: no SKILL.md in this folder (give a skill folder)")
        min_score = values("skills_mutation_min_score")
        if min_score is not None and not 0 <= min_score <= 1:
            raise _bad(values, "skills_mutation_min_score", "a score from 0 to 1", min_score)
        for ini in ("skills_mutation_max_mutants", "skills_mutation_jobs"):
            if values(ini) < 1:
                raise _bad(values, ini, "a positive whole number", values(ini))
        timeout = values("skills_mutation_timeout")
        if timeout is not None and timeout <= 0:
            raise _bad(values, "skills_mutation_timeout", "a positive number of seconds", timeout)
        return cls(
            skill_dir,
            values,
            seed=values("skills_mutation_seed"),
            max_mutants=values("skills_mutation_max_mutants"),
            limits=RunLimits(jobs=values("skills_mutation_jobs"), timeout=timeout),
            min_score=min_score,
            pytest_args=None if pytest_args is None else tuple(pytest_args),
        )

    def suite(self) -> Suite:
        """The checks each mutant faces."""
        if self.pytest_args is not None:
            from .pytest_suite import PytestSuite

            return PytestSuite.for_skill(self.skill_dir, self.values.base_dir, self.pytest_args)
        from ..config.runs import run_settings
        from ..config.runtimes import runtime_options
        from .checks import ScenarioSuite, scenario_checks

        checks = scenario_checks(
            self.skill_dir, self.values.base_dir, self.values("skills_roots")
        )
        if not checks:
            raise MutateError(
                f"{self.skill_dir}: no scenario offers this skill (none in its evals/ folder nor"
                " under the configuration's folder): nothing can kill a mutant. Add a"
                " *.scenario.yaml, or run the repository's tests with --pytest"
            )
        return ScenarioSuite(
            self.skill_dir, checks, run_settings(self.values), runtime_options(self.values)
        )


def _bad(values: SettingValues, ini: str, wanted: str, got: object) -> ConfigurationError:
    return ConfigurationError(
        f"{values.origin(ini)}: {REGISTRY[ini].flag_name} must be {wanted}, got {got!r}"
    )


@dataclass(frozen=True)
class MutationOutcome:
    """A finished run and its report."""

    report: MutationReport
    run: MutationRun
    check_names: tuple[str, ...]

    def render(self, format: str) -> str:
        from .report import text_report

        if format == "json":
            return self.report.to_json()
        if format == "html":
            from .report_html import html_report

            return html_report(self.report, self.run)
        return text_report(self.report, self.run)


def run_plan(
    plan: MutationPlan, progress: Callable[[str], None] | None = None
) -> MutationOutcome:
    """Make the mutants, run the checks on the original and on each, build the report."""
    from ..skill import Skill
    from .operators import mutants_of
    from .report import build_report
    from .runner import OriginalFailedError, run_mutation

    skill = Skill.load(plan.skill_dir)
    mutants = mutants_of(skill, plan.seed, plan.max_mutants)
    suite = plan.suite()
    if progress is not None:
        progress(
            f"{skill.name}: {len(mutants)} mutants, {len(suite.names)} check(s), "
            f"{plan.limits.jobs} at once"
        )
    run = run_mutation(plan.skill_dir, suite, mutants, plan.limits, progress)
    if not run.passing:
        failures = "; ".join(
            f"{failure.check}: {failure.why}" for failure in run.original if failure is not None
        )
        raise OriginalFailedError(
            f"no check passes on the original, so none can kill a mutant ({failures})"
        )
    return MutationOutcome(build_report(skill.name, run), run, tuple(suite.names))
