"""``agent-skills grader-check``: a grader model tested on a gold set before it is trusted.

The package ships a gold set (``grader_gold.json``): runs graded by hand, each a transcript,
its output files, one expectation and the verdict a careful grader gives (``truth``); half of
them must fail (claims without evidence, the right file name with the wrong content, partial
completion, an answer that restates the question, an expectation met only in a tool result
and not in the answer).  The grader grades each case as it grades an eval run (the same
request, its quotes checked the same way, ``--grader-runs`` times), recorded in its cassette
and replayed offline like the evals; the figures say how far its verdicts can be trusted:

- ``accuracy``: the share of cases it judged as the gold set does;
- ``false_pass_rate``: the share of the must-fail cases it passed (the figure that matters:
  an invented pass makes a skill look better than it is);
- ``false_fail_rate``: the share of the must-pass cases it failed;
- ``unsupported_rate``: the share of its passes whose quotes were none of them in the run
  (counted as fails; a grader that invents evidence);
- ``self_agreement`` (``--grader-runs`` K > 1): the mean share of its K gradings of a case
  that agree with their most common verdict.
"""

from __future__ import annotations

import concurrent.futures
import importlib.resources
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ConfigDict, Field, ValidationError

from ...errors import AgentSkillsError
from ...harness.errors import CassetteMissError, NoCassetteError
from ...typed_documents import Part, schema_field
from ..run.grader import GradingError, GradingRequest, files_text
from ..run.grader_runs import grade_times

if TYPE_CHECKING:
    from ..setup.eval_options import EvalOptions

#: The gold set shipped in the package.
GOLD_SET = "grader_gold.json"


class GoldSetError(AgentSkillsError):
    """The gold set is not the document it must be, or its gradings are not recorded."""


class GoldCase(Part):
    """One graded case: a run as the grader reads it and the verdict it must give."""

    id: int
    #: What the case tests (``met``, ``claim without evidence``, ``partial completion``, ...).
    kind: str
    prompt: str
    #: The agent's part of the transcript, a line each, as the grader reads it
    #: (``[assistant] ...``, ``[tool call] ...``, ``[tool result] ...``, ``[final answer] ...``).
    transcript: list[str]
    #: The output files by name (below ``out/``), as text.
    outputs: dict[str, str] = Field(default_factory=dict)
    expectation: str
    #: The verdict a careful grader gives.
    truth: bool
    why: str = ""

    def request(self, cassette: Path) -> GradingRequest:
        """The grading request of this case, as an eval run's would be."""
        outputs = {name: text.encode("utf-8") for name, text in self.outputs.items()}
        transcript = "\n".join([f"[user] {self.prompt}", *self.transcript])
        return GradingRequest((self.expectation,), transcript, files_text(outputs, {}), cassette)


class GoldSet(Part):
    description: str = ""
    cases: list[GoldCase] = Field(min_length=1)


class CaseResult(Part):
    """How the grader judged one case."""

    id: int
    kind: str
    expectation: str
    truth: bool
    #: The verdict after the quotes were checked (an unsupported pass is a fail).
    passed: bool
    #: False: the grader passed it with no quote found in the case's run.
    supported: bool | None
    quotes: list[str]
    evidence: str
    correct: bool
    #: With ``--grader-runs`` K > 1: the share of gradings that gave the most common verdict.
    agreement: float | None = None
    #: Why the grader gave no verdict (counted as a fail), or None.
    error: str | None = None


class GraderCheck(Part):
    """grader-check.json: the grader's figures on the gold set, and each case."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_url: str = schema_field("grader-check")
    grader_model: str
    grader_runs: int
    trust_grader: bool
    items: int
    accuracy: float
    false_pass_rate: float
    false_fail_rate: float
    unsupported_rate: float
    self_agreement: float | None = None
    max_false_pass: float
    #: Whether the false-pass rate is at most ``max_false_pass``.
    passed: bool
    cases: list[CaseResult]

    def figures(self) -> dict[str, Any]:
        """The figures alone, as benchmark.json's ``metadata.grader_check`` carries them."""
        return self.model_dump(exclude={"cases", "schema_url"})

    def to_json(self) -> str:
        """The document as written, ``$schema`` first."""
        return self.model_dump_json(by_alias=True, indent=2)


def load_gold(path: Path | None = None) -> GoldSet:
    """The gold set at ``path`` (the shipped one by default); a :class:`GoldSetError` naming
    the file and the JSON path of what is wrong."""
    if path is None:
        resource = importlib.resources.files(__package__ or "").joinpath(GOLD_SET)
        shown, text = GOLD_SET, resource.read_text(encoding="utf-8")
    else:
        shown = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise GoldSetError(f"{shown}: cannot read the gold set: {error.strerror}") from None
    try:
        return GoldSet.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(the document)"
        raise GoldSetError(
            f'{shown}: {where}: {first["msg"]}; a gold set is {{"cases": [{{"id",'
            ' "kind", "prompt", "transcript", "outputs", "expectation", "truth"}]}'
        ) from None


def cassette_folder(options: EvalOptions) -> Path:
    """Where the gradings of the gold set are recorded: ``<cassettes>/grader-check/<grader>/``."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", options.grader) or "grader"
    return options.base_dir / options.cassettes / "grader-check" / safe


def figures(results: Sequence[CaseResult], options: EvalOptions) -> GraderCheck:
    """The figures of the judged cases (see the module's text)."""
    must_fail = [item for item in results if not item.truth]
    must_pass = [item for item in results if item.truth]
    claimed = [item for item in results if item.passed or item.supported is False]
    agreements = [item.agreement for item in results if item.agreement is not None]
    false_pass = _share(sum(item.passed for item in must_fail), len(must_fail))
    return GraderCheck(
        grader_model=options.grader,
        grader_runs=options.grader_runs,
        trust_grader=options.trust_grader,
        items=len(results),
        accuracy=_share(sum(item.correct for item in results), len(results)),
        false_pass_rate=false_pass,
        false_fail_rate=_share(sum(not item.passed for item in must_pass), len(must_pass)),
        unsupported_rate=_share(sum(item.supported is False for item in claimed), len(claimed)),
        self_agreement=round(sum(agreements) / len(agreements), 4) if agreements else None,
        max_false_pass=options.max_false_pass,
        passed=false_pass <= options.max_false_pass,
        cases=list(results),
    )


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def text_report(check: GraderCheck) -> str:
    """The figures as a person reads them, and each case the grader got wrong."""
    lines = [
        f"grader {check.grader_model} on {check.items} gold cases"
        f" ({check.grader_runs} grading(s) each"
        f"{'; --trust-grader: quotes not checked' if check.trust_grader else ''}):",
        f"  accuracy         {check.accuracy:.2f}",
        f"  false-pass rate  {check.false_pass_rate:.2f} (at most {check.max_false_pass:.2f})",
        f"  false-fail rate  {check.false_fail_rate:.2f}",
        f"  unsupported rate {check.unsupported_rate:.2f}",
    ]
    if check.self_agreement is not None:
        lines.append(f"  self-agreement   {check.self_agreement:.2f}")
    wrong = [item for item in check.cases if not item.correct]
    if wrong:
        lines.append("wrong verdicts:")
    for item in wrong:
        said = "passed" if item.passed else "failed"
        if item.supported is False:
            said = "passed without a quote found (unsupported)"
        if item.error:
            said = f"no verdict ({item.error.splitlines()[0][:160]})"
        lines.append(
            f"  case {item.id} ({item.kind}): {said}, should have"
            f" {'passed' if item.truth else 'failed'}: {item.expectation}"
        )
    verdict = "within" if check.passed else "ABOVE"
    lines.append(
        f"false-pass rate {check.false_pass_rate:.2f} is {verdict} --max-false-pass"
        f" {check.max_false_pass:.2f}"
    )
    return "\n".join(lines)


def write_document(path: Path, check: GraderCheck) -> None:
    """grader-check.json at ``path``, written whole (never half)."""
    from ...files import write_atomic
    from ..run.bounds import json_file_bytes

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json_file_bytes(json.loads(check.to_json())))


def run_grader_check(
    options: EvalOptions, gold: GoldSet | None = None, progress: TextIO | None = None
) -> GraderCheck:
    """The grader of ``options`` on every case of the gold set (the shipped one by default),
    ``--grader-runs`` times each, its requests recorded or replayed as the options say."""
    from ..run.converse import ModelAccess
    from ..run.transport import UpstreamPool

    cases = gold or load_gold()
    folder = cassette_folder(options)
    pool = UpstreamPool(options.upstream, jobs=options.jobs, retry=options.retry)
    access = ModelAccess(options, pool)
    count = [0]

    def judged(case: GoldCase) -> CaseResult:
        request = case.request(folder / f"case-{case.id}.grader.json")
        try:
            grading = grade_times(access, request, options.grader_runs)
        except (CassetteMissError, NoCassetteError) as failure:
            raise GoldSetError(
                f"{failure}\nThe gradings of the gold set by {options.grader!r} are not"
                " recorded as asked: record them with --record new and --upstream-url"
            ) from None
        except GradingError as failure:
            return CaseResult(
                id=case.id, kind=case.kind, expectation=case.expectation, truth=case.truth,
                passed=False, supported=True, quotes=[], evidence="", correct=not case.truth,
                error=str(failure),
            )  # fmt: skip
        (graded,) = grading.graded
        agreement = graded.grader_agreement["agreement"] if graded.grader_agreement else None
        result = CaseResult(
            id=case.id, kind=case.kind, expectation=case.expectation, truth=case.truth,
            passed=graded.passed, supported=graded.supported, quotes=list(graded.quotes),
            evidence=graded.evidence, correct=graded.passed == case.truth, agreement=agreement,
        )  # fmt: skip
        count[0] += 1
        if progress is not None:
            mark = "ok" if result.correct else "WRONG"
            progress.write(f"grader-check {count[0]}/{len(cases.cases)}: case {result.id} {mark}\n")
        return result

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as workers:
            results = list(workers.map(judged, cases.cases))
    finally:
        pool.close()
    return figures(results, options)


def checked_grader(options: EvalOptions, progress: TextIO | None) -> dict[str, Any] | None:
    """``eval --grader-check``: the grader's figures on the gold set (None: not asked)."""
    if not options.grader_check:
        return None
    return run_grader_check(options, progress=progress).figures()
