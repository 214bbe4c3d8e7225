"""Which skill the model loads first for a query, with a whole repository of skills offered.

The runs behind the repository-wide trigger matrix and the scoring of description
candidates: each is one conversation from the query, through its own cassette, that ends
at the first ``skill_load`` of a skill of the repository (what the skill does then is not
asked) or when the model answers without loading one (``none``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ...harness.conversation import Conversation
from ..run.converse import ModelAccess, converse
from ..setup.budget import TokenBudget
from ..setup.eval_options import EvalOptions
from ..suite.suite_runner import Failures, Progress, run_all

#: What a run loaded when the model loaded no skill.
NONE = "none"
#: The error of a run never started because the token budget was spent.
SKIPPED = "skipped: the token budget (--max-tokens) was spent"


@dataclass(frozen=True)
class RoutingRun:
    """One run to make: a query and the cassette it is recorded in."""

    query: str
    cassette: Path


@dataclass(frozen=True)
class Routed:
    """What one run gave: the skill loaded first (or :data:`NONE`), the run's failure."""

    loaded: str
    #: Empty when the run went through; else why it did not (it then counts for no skill).
    error: str = ""
    tokens: int = 0
    #: Never started: the token budget was spent (its error is :data:`SKIPPED`).
    skipped: bool = False


@dataclass(frozen=True)
class RoutingBatch:
    """Runs made against one repository (every skill offered, as the agent sees them)."""

    repository: Any
    #: Stable names of this machine's paths in the recordings (skill roots).
    roots: Mapping[str, str]
    runs: Sequence[RoutingRun]
    #: The progress lines' subject ("trigger matrix of 50 skills"); none without a stream.
    what: str = ""
    progress: TextIO | None = None
    #: The tokens every batch of one command may spend together (default: one of
    #: ``options.max_tokens`` for this batch alone).
    budget: TokenBudget | None = None


def route_all(options: EvalOptions, batch: RoutingBatch) -> tuple[list[Routed], bool]:
    """Every run of ``batch``, up to ``options.jobs`` at once, in order; the second value
    says whether Ctrl-C stopped them (the runs not made are errors ``interrupted``)."""
    names = frozenset(batch.repository.names())

    def one(access: ModelAccess, run: RoutingRun) -> Routed:
        conversation = Conversation(
            batch.repository, run.query, cassette=run.cassette, max_turns=access.options.max_turns
        )
        conversed = converse(access, conversation, batch.roots, stop_on_load=names)
        error = "" if conversed.error is None else str(conversed.error)
        return Routed(conversed.loaded or NONE, error, conversed.tokens)

    progress = Progress(batch.progress, len(batch.runs), batch.what)
    return run_all(
        options,
        batch.runs,
        one,
        Failures(
            stopped_before=lambda run: Routed(NONE, "interrupted"),
            crashed=lambda run, error: Routed(NONE, f"{type(error).__name__}: {error}"),
            skipped=lambda run: Routed(NONE, SKIPPED, skipped=True),
        ),
        lambda routed: progress.done(not routed.error, routed.tokens),
        batch.budget,
    )
