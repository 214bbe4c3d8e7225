"""Evals from Python, shaped like an HTTP client: an :class:`EvalClient` is configured once
(its :class:`EvalOptions`, which the settings build: how the model is reached, the models,
the runtime, the runs, the budgets; the matrix bars; where progress goes) and has a method
per job, each returning the job's typed document and, given ``out``, writing the command's
output folder; ``plan_<job>`` is the job's dry run.  Ctrl-C stops a job: what finished is
written, then :class:`EvalInterrupted` (a ``KeyboardInterrupt``) carries its document.
``agent-skills eval``, ``triggers``, ``improve-description`` and the pytest items of evals
call only this client (docs/evals.md shows it used).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

from ...typed_documents import Document
from ..documents.benchmark_model import BenchmarkDocument
from ..documents.document_io import write_document
from ..documents.overview import ModelsDocument
from ..documents.triggers import CandidatesDocument, MatrixDocument, TriggerResultsDocument
from ..setup.eval_options import EvalOptions
from ..suite.suite_runner import BenchmarkOutcome, EvalRequest
from ..triggers.improve import ImproveLoop as ImproveLoop
from ..triggers.matrix import MatrixBars

if TYPE_CHECKING:
    from ...settings import SettingValues
    from ..triggers.improve import ImproveRequest
    from ..triggers.matrix import MatrixRequest

D = TypeVar("D", bound=Document)

#: ``baseline="git:REF"``: the skill as it was at a git ref.
GIT_PREFIX = "git:"


class EvalInterrupted(KeyboardInterrupt, Generic[D]):
    """Ctrl-C stopped a job; :attr:`document` is what finished (written, given ``out``)."""

    def __init__(self, document: D) -> None:
        super().__init__("interrupted: the runs that finished are written")
        self.document = document


@dataclass(frozen=True)
class BenchmarkSpec:
    """What a benchmark compares and which evals it runs."""

    #: An earlier version of the skill to compare with instead of without it: a folder, or
    #: ``git:REF`` for the skill as it was at a git ref (taken with git archive).
    baseline: Path | str | None = None
    #: Only these eval ids (all when empty).
    only: tuple[int, ...] = ()
    #: An A/A run: the skill against itself (writes calibration.json, the noise floor).
    calibrate: bool = False


NO_SPEC = BenchmarkSpec()
DEFAULT_LOOP = ImproveLoop()


@dataclass(frozen=True)
class EvalClient:
    """The evals of skills, configured once; a method per job (see the module)."""

    options: EvalOptions = field(default_factory=EvalOptions)
    #: The scores every skill must reach in :meth:`matrix`.
    bars: MatrixBars = field(default_factory=MatrixBars)
    #: Where the progress lines go (None: nowhere).
    progress: TextIO | None = None

    @classmethod
    def from_settings(cls, values: SettingValues, progress: TextIO | None = None) -> EvalClient:
        """The client of resolved settings (a command's flags, the pytest options, the
        environment, the configuration file); a bad value is a ``ConfigurationError`` naming
        where it was set."""
        from ..setup.eval_options import eval_options
        from ..triggers.matrix import matrix_bars

        return cls(eval_options(values), matrix_bars(values), progress)

    # -- a skill's evals ------------------------------------------------------------------

    def benchmark(
        self, skill: Path | str, spec: BenchmarkSpec = NO_SPEC, *, out: Path | None = None
    ) -> BenchmarkDocument:
        """Every eval of ``skill`` ``options.runs`` times with the skill and without it (or
        as ``spec`` says)."""
        from ..suite.suite_runner import run_benchmark

        with self._eval_request(skill, spec) as request:
            outcome = run_benchmark(request)
        document = outcome.document
        if out is not None:
            document = write_benchmark_folder(out, outcome, spec.calibrate)
        return _finished(document, outcome.interrupted)

    def plan_benchmark(self, skill: Path | str, spec: BenchmarkSpec = NO_SPEC) -> str:
        """What :meth:`benchmark` would do, no request made: every conversation, the most
        requests it may make, the tokens of its recording, the budgets."""
        from ..suite.suite_runner import dry_run

        with self._eval_request(skill, spec) as request:
            return dry_run(request)

    def models(
        self,
        skill: Path | str,
        spec: BenchmarkSpec = NO_SPEC,
        *,
        out: Path | None = None,
        each: Callable[[BenchmarkDocument], None] | None = None,
    ) -> ModelsDocument:
        """:meth:`benchmark` on each model of ``options.models``, one after the other (each
        in ``out/<model>/``, then ``each`` of its document), and the overview (models.json);
        Ctrl-C stops the models after the one it stopped."""
        from ..report.write import write_report
        from ..suite.per_model import MODELS_NAME, run_models

        def done(folder: Path, outcome: BenchmarkOutcome) -> BenchmarkDocument:
            document = outcome.document
            if out is not None:
                document = write_benchmark_folder(folder, outcome, spec.calibrate)
            if each is not None:
                each(document)
            return document

        with self._eval_request(skill, spec) as request:
            overview, stopped = run_models(request, self.options.models, done, out or Path())
        if out is not None:
            write_document(out / MODELS_NAME, overview)
            write_report(out)
        return _finished(overview, stopped)

    # -- which skill fires ----------------------------------------------------------------

    def triggers(self, skill: Path | str, *, out: Path | None = None) -> TriggerResultsDocument:
        """The trigger rate of each query of ``skill``'s ``evals/triggers.json``: how many of
        its ``options.runs`` runs loaded the skill, against ``options.threshold``."""
        from ..report.write import write_report
        from ..suite.suite_runner import run_triggers

        outcome = run_triggers(self._request(skill))
        if out is not None:
            write_document(out / "triggers.json", outcome.document)
            write_report(out)
        return _finished(outcome.document, outcome.interrupted)

    def plan_triggers(self, skill: Path | str) -> str:
        """What :meth:`triggers` would do, no request made."""
        from ..suite.suite_runner import dry_run

        return dry_run(self._request(skill), triggers=True)

    def matrix(self, paths: Sequence[Path | str], *, out: Path | None = None) -> MatrixDocument:
        """Every trigger query of the skills under ``paths`` (skill folders, SKILL.md files,
        roots of many), each asked with all of them offered: which skill each run loaded,
        every skill's recall and precision against :attr:`bars`, the collisions."""
        from ..report.folder import MATRIX_FILE
        from ..report.write import write_report
        from ..triggers.matrix import run_matrix

        outcome = run_matrix(self._matrix_request(paths))
        document = outcome.document
        if out is not None:
            write_document(out / MATRIX_FILE, document)
            write_report(out)
        return _finished(document, outcome.interrupted)

    def plan_matrix(self, paths: Sequence[Path | str]) -> str:
        """What :meth:`matrix` would do, no request made."""
        from ..triggers.matrix import matrix_dry_run

        return matrix_dry_run(self._matrix_request(paths))

    def improve(
        self,
        skill: Path | str,
        *,
        loop: ImproveLoop = DEFAULT_LOOP,
        baseline: Path | str | None = None,
        write: bool = False,
        out: Path | None = None,
    ) -> CandidatesDocument:
        """The description loop: a model proposes descriptions from the train queries'
        failures, each scored on the train and held-out queries; ``baseline`` (a folder or
        ``git:REF``) starts from that version's description.  With ``write``, the best
        description goes into ``skill``'s SKILL.md (nothing else changed) when it is not the
        original."""
        from ...files import write_atomic
        from ..report.folder import CANDIDATES_FILE
        from ..report.write import write_report
        from ..triggers.description_edit import replace_description
        from ..triggers.improve import improve_description

        with self._improve_request(skill, loop, baseline) as request:
            outcome = improve_description(request)
        document = outcome.document
        if out is not None:
            write_document(out / CANDIDATES_FILE, document)
            write_report(out)
        if write and document.best_iteration != 0:
            skill_file = Path(skill) / "SKILL.md"
            text = skill_file.read_bytes().decode("utf-8")
            write_atomic(skill_file, replace_description(text, document.best))
        return _finished(document, outcome.interrupted)

    def plan_improve(
        self,
        skill: Path | str,
        *,
        loop: ImproveLoop = DEFAULT_LOOP,
        baseline: Path | str | None = None,
    ) -> str:
        """What :meth:`improve` may do at most, no request made: the split, every round."""
        from ..triggers.improve import improve_dry_run

        with self._improve_request(skill, loop, baseline) as request:
            return improve_dry_run(request)

    # -- the requests of the library ------------------------------------------------------

    def _request(self, skill: Path | str, **fields: Any) -> EvalRequest:
        return EvalRequest(Path(skill), self.options, progress=self.progress, **fields)

    @contextmanager
    def _eval_request(self, skill: Path | str, spec: BenchmarkSpec) -> Iterator[EvalRequest]:
        with baseline_folder(spec.baseline, Path(skill), self.progress) as (folder, ref, commit):
            yield self._request(
                skill,
                baseline=folder,
                only=spec.only,
                calibrate=spec.calibrate,
                baseline_ref=ref,
                baseline_commit=commit,
            )

    def _matrix_request(self, paths: Sequence[Path | str]) -> MatrixRequest:
        from ..triggers.matrix import MatrixRequest

        return MatrixRequest(
            tuple(Path(path) for path in paths), self.options, self.bars, self.progress
        )

    @contextmanager
    def _improve_request(
        self, skill: Path | str, loop: ImproveLoop, baseline: Path | str | None
    ) -> Iterator[ImproveRequest]:
        from ...skill import Skill
        from ..triggers.improve import ImproveError, ImproveRequest

        with baseline_folder(baseline, Path(skill), self.progress) as (folder, ref, commit):
            start = None
            if folder is not None:
                if not (folder / "SKILL.md").is_file():
                    raise ImproveError(f"--baseline {baseline}: not a skill folder (no SKILL.md)")
                start = Skill.load(folder).description
            yield ImproveRequest(
                Path(skill),
                self.options,
                holdout=loop.holdout,
                seed=loop.seed,
                iterations=loop.iterations,
                progress=self.progress,
                start_description=start,
                start_ref=ref,
                start_commit=commit,
            )


def _finished(document: D, interrupted: bool) -> D:
    """``document``, or :class:`EvalInterrupted` carrying it when Ctrl-C stopped the job."""
    if interrupted:
        raise EvalInterrupted(document)
    return document


@contextmanager
def baseline_folder(
    spec: Path | str | None, skill_dir: Path, progress: TextIO | None
) -> Iterator[tuple[Path | None, str, str]]:
    """The folder of a baseline (None without one) and, for ``git:REF``, the ref and the
    commit: the skill folder as it was at the ref (said on ``progress``), unpacked in a
    temporary folder removed afterwards (the working tree untouched)."""
    if spec is None or not str(spec).startswith(GIT_PREFIX):
        yield (Path(spec) if spec is not None else None), "", ""
        return
    from ...gitref import export_folder

    ref = str(spec).removeprefix(GIT_PREFIX)
    with tempfile.TemporaryDirectory(prefix="agent-skills-baseline-") as scratch:
        folder = Path(scratch) / skill_dir.resolve().name
        snapshot = export_folder(ref, skill_dir, folder, f"--baseline {spec}")
        if progress is not None:
            said = f"baseline: {skill_dir} as it was at {ref} (commit {snapshot.commit})"
            print(said, file=progress)
        yield snapshot.path, ref, snapshot.commit


def write_benchmark_folder(
    out: Path, outcome: BenchmarkOutcome, calibrate: bool
) -> BenchmarkDocument:
    """One benchmark's folder: calibration.json (an A/A run) or the noise floor of an earlier
    one put into the document, benchmark.json and .md, the runs' folders, report.html; the
    document written."""
    from ..report.write import write_report
    from ..suite.calibration import attach_calibration, write_calibration
    from ..suite.output_folder import write_benchmark

    if calibrate:
        document = write_calibration(out, outcome.document, outcome.runs)
    else:
        document = attach_calibration(out, outcome.document)
    write_benchmark(out, document, outcome.runs, outcome.evals)
    write_report(out)
    return document
