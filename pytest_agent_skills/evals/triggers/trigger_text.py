"""A skill's trigger results (triggers.json of ``agent-skills eval --triggers``) in words:
each query's line as the command prints it and as the pytest item of ``evals/triggers.json``
fails with it, written once here so that both say the same."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..documents.triggers import TriggerResult, TriggerResultsDocument
from ..setup.budget import UNJUDGED, never_started


@dataclass(frozen=True)
class TriggersText:
    """The lines of one triggers.json document."""

    #: One line per query, ``pass`` or ``FAIL``, its rate and what it should do.
    queries: tuple[str, ...]
    #: The lines of the queries that fail, each with its first error below it.
    failing: tuple[str, ...]
    #: The runs never started for the token budget; empty when none was.
    skipped: str
    #: How many queries pass, last.
    summary: str
    failed: bool

    def failure(self) -> str:
        """The pytest failure text: the failing queries, then the rest."""
        return "\n".join(part for part in (*self.failing, self.skipped, self.summary) if part)


def triggers_text(document: TriggerResultsDocument | Mapping[str, Any]) -> TriggersText:
    """The lines of a triggers.json document (a mapping is read as one)."""
    if not isinstance(document, TriggerResultsDocument):
        document = TriggerResultsDocument.model_validate(document)
    results = document.results
    lines = [_query_line(result) for result in results]
    failing = []
    for result, line in zip(results, lines, strict=True):
        if not result.passed:
            failing.append(line)
            failing.extend(f"  error: {message}" for message in result.error_messages[:1])
    skipped = sum(result.skipped for result in results)
    made = sum(result.runs for result in results)
    passed = sum(1 for result in results if result.passed)
    return TriggersText(
        queries=tuple(lines),
        failing=tuple(failing),
        skipped=never_started(skipped, made + skipped, UNJUDGED) if skipped else "",
        summary=f"{passed} of {len(results)} trigger queries pass",
        failed=passed < len(results),
    )


def _query_line(result: TriggerResult) -> str:
    errors = f", {result.errors} errors" if result.errors else ""
    return (
        f"{'pass' if result.passed else 'FAIL'}  rate {result.trigger_rate:.2f}"
        f" ({result.triggers}/{result.runs}{errors}), should"
        f"{'' if result.should_trigger else ' not'} trigger: {result.query}"
    )
