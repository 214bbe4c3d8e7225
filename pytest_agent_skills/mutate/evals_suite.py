"""``agent-skills mutate --evals``: the skill's ``evals/evals.json`` through the eval pipeline
(its endpoint or cassettes, budgets, recording and isolation: ``agent-skills eval``'s), each
mutant against the original as its baseline.  A mutant is killed when an eval's verdict is
``worse`` (the 95% interval of the delta below 0).

Sequential testing: a mutant's evals run 2 runs per configuration first, then one more at a
time up to ``--runs``, and stop as soon as a verdict is ``worse``; the runs already made are
replayed from their cassettes, never asked again.  What the runs never made would have cost
is counted (:meth:`EvalsSuite.spent`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .checks import CheckError, Failure

if TYPE_CHECKING:
    from ..evals.setup.eval_options import EvalOptions

#: The fewest runs per configuration that give an interval, hence a verdict.
FIRST_RUNS = 2
#: Where each mutant's recordings go, below the eval cassette folder.
MUTANT_CASSETTES = "mutants"


class EvalsSuite:
    """One check: every eval of ``evals.json`` (``only`` those ids when given)."""

    def __init__(self, skill_dir: Path, options: EvalOptions, only: Sequence[int] = ()) -> None:
        self.skill_dir = skill_dir.resolve()
        self.options = options
        self.only = tuple(only)
        self.names: Sequence[str] = (f"evals.json of {skill_dir.name}",)
        self.made = self.saved = 0

    def place(self, work: Path) -> None:
        del work  # the eval pipeline makes and removes its own workspaces

    def spent(self) -> tuple[int, int]:
        """Model requests made, and those stopping early did not make (estimated from the
        runs made: their model turns and their grader's requests)."""
        return self.made, self.saved

    def run(self, index: int, folder: Path) -> Failure | None:
        from ..evals.suite.suite_runner import EvalRequest, run_benchmark

        if folder.resolve() == self.skill_dir:
            return None  # the original is the baseline each mutant is compared with
        cassettes = self.options.cassettes / MUTANT_CASSETTES / folder.parent.name
        most = max(FIRST_RUNS, self.options.runs)
        for runs in range(FIRST_RUNS, most + 1):
            options = dataclasses.replace(self.options, runs=runs, cassettes=cassettes)
            request = EvalRequest(folder, options, baseline=self.skill_dir, only=self.only)
            outcome = run_benchmark(request)
            evals = outcome.document.model_dump(mode="json")["evals"]
            worse = [verdict for verdict in evals if verdict["verdict"] == "worse"]
            if worse or runs == most:
                break
        self._count(outcome.runs, len(outcome.document.evals), most)
        failed = [run for run in outcome.runs if run.error is not None and not run.skipped]
        if failed:  # no verdict stands on runs that never finished
            first = failed[0]
            message = first.error.message if first.error is not None else ""
            raise CheckError(
                f"{len(failed)} eval run(s) failed; first (eval {first.key.eval_id}"
                f" {first.key.configuration} run {first.key.run_number}): {message}"
            )
        if not worse:
            return None
        first = worse[0]
        return Failure(
            f"eval {first['eval_id']} {first['eval_name']}",
            f"worse than the original after {runs} run(s) per configuration: delta 95%"
            f" interval {first['delta_ci95']}",
        )

    def _count(self, runs: Sequence[Any], evals: int, most: int) -> None:
        """Add the requests of the runs made (each made once: the earlier rounds' runs were
        replayed by the later ones) and those of the runs ``most`` would have made more."""
        from ..evals.suite.suite_runner import GRADER_REQUESTS

        made = [run for run in runs if not run.skipped]
        if not made:
            return
        requests = sum(run.metrics.get("total_steps", 0) + GRADER_REQUESTS for run in made)
        planned = evals * 2 * most  # the mutant's and the original's runs
        self.made += requests
        self.saved += round(requests / len(made) * max(0, planned - len(made)))
