"""``--grader-runs K``: each run's transcript graded K times, and how often the grader agrees
with itself, per expectation.

Each grading's passes are checked against the run first (see :mod:`.quotes`): an unsupported
pass is a fail there, so it splits the gradings. The first grading keeps its cassette
(``run-<n>.grader.json``), the k-th has its own (``run-<n>.grader-<k>.json``). An expectation
the gradings agree on keeps that verdict; one they disagree on is never a pass and says so in
its evidence: a split is shown, never averaged away. Each expectation records
``grader_agreement``: ``{passed, gradings, agreement}``, the agreement being the share of
gradings that gave the most common verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..documents.benchmark_model import ExpectationVerdict
from .converse import ModelAccess
from .grader import Grading, GradingRequest, grade
from .quotes import checked, quotable, trusted


def nth_cassette(request: GradingRequest, number: int) -> GradingRequest:
    """The request of the ``number``-th grading (from 1): its own cassette after the first."""
    if number == 1:
        return request
    path = request.cassette
    return dataclasses.replace(
        request, cassette=path.with_name(f"{path.name.removesuffix('.json')}-{number}.json")
    )


def combined(gradings: Sequence[Sequence[ExpectationVerdict]]) -> list[ExpectationVerdict]:
    """One verdict per expectation from several gradings of the same transcript."""
    found = []
    for verdicts in zip(*gradings, strict=True):
        passed = sum(item.passed for item in verdicts)
        count = len(verdicts)
        agreement = {
            "passed": passed,
            "gradings": count,
            "agreement": round(max(passed, count - passed) / count, 4),
        }
        # An unsupported pass among them is the one shown: what the grader could not quote.
        first, which = verdicts[0], "first grading"
        unsupported = [item for item in verdicts if item.supported is False]
        if unsupported:
            first, which = unsupported[0], "an unsupported grading"
        if 0 < passed < count:
            evidence = (
                f"grader split: {passed} of {count} gradings passed it (a split is never a"
                f" pass); {which}: {first.evidence}"
            )
            found.append(
                first.model_copy(
                    update={"passed": False, "evidence": evidence, "grader_agreement": agreement}
                )
            )
        else:
            found.append(first.model_copy(update={"grader_agreement": agreement}))
    return found


def grade_times(access: ModelAccess, request: GradingRequest, times: int) -> Grading:
    """``request`` graded ``times`` times, each grading's passes checked against the run's
    text (see :mod:`.quotes`; not with ``--trust-grader``)."""
    every = [
        _checked(access, grade(access, nth_cassette(request, number)), request)
        for number in range(1, max(times, 1) + 1)
    ]
    first = every[0]
    if times <= 1:
        return first
    return Grading(
        combined([grading.graded for grading in every]),
        sum(grading.requests for grading in every),
        first.output,
    )


def _checked(access: ModelAccess, grading: Grading, request: GradingRequest) -> Grading:
    if access.options.trust_grader:
        return dataclasses.replace(grading, graded=trusted(grading.graded))
    text = quotable(request.transcript, request.files)
    return dataclasses.replace(grading, graded=checked(grading.graded, text))
