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
    #: ``--evals``: the eval ids to run (empty: every eval); None: not the evals.
    evals: tuple[int, ...] | None = None

    @classmethod
    def from_settings(
        cls,
        skill_dir: Path,
        values: SettingValues,
        pytest_args: Sequence[str] | None = None,
        evals: Sequence[int] | None = None,
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
            # Model runs take what the endpoint takes: no deadline unless one is set.
            limits=RunLimits(
                jobs=values("skills_mutation_jobs"), timeout=timeout, auto_timeout=evals is None
            ),
            min_score=min_score,
            pytest_args=None if pytest_args is None else tuple(pytest_args),
            evals=None if evals is None else tuple(evals),
        )

    def suite(self) -> Suite:
        """The checks each mutant faces."""
        if self.evals is not None:
            from ..evals.setup.eval_options import eval_options
            from .evals_suite import EvalsSuite

            if not (self.skill_dir / "evals" / "evals.json").is_file():
                raise MutateError(f"{self.skill_dir}: --evals needs evals/evals.json; it has none")
            return EvalsSuite(self.skill_dir, eval_options(self.values), self.evals)
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
    return MutationOutcome(build_report(skill.name, run), run)


def dry_run_text(plan: MutationPlan) -> str:
    """What ``--evals`` would do, without a request: the mutants, and the runs of each (those
    of ``agent-skills eval --dry-run`` against the original, at the most runs; a mutant's
    runs stop earlier once its verdict is worse)."""
    from dataclasses import replace

    from ..evals.setup.eval_options import eval_options
    from ..evals.suite.suite_runner import EvalRequest, dry_run
    from ..skill import Skill
    from .evals_suite import FIRST_RUNS
    from .operators import mutants_of

    mutants = mutants_of(Skill.load(plan.skill_dir), plan.seed, plan.max_mutants)
    options = eval_options(plan.values)
    most = max(FIRST_RUNS, options.runs)
    each = dry_run(
        EvalRequest(
            plan.skill_dir, replace(options, runs=most), baseline=plan.skill_dir,
            only=plan.evals or (),
        )
    )
    lines = [f"{len(mutants)} mutants, each run against the original as its baseline:"]
    lines.extend(f"  {m.id} {m.operator} {m.file}:{m.line}" for m in mutants)
    lines.append(
        f"each mutant: {FIRST_RUNS} runs per configuration first, then one more at a time up to"
        f" {most}, stopping once a verdict is worse; at the most, as for one mutant:"
    )
    lines.append(each)
    return "\n".join(lines)
