"""What an eval may spend, and what it would do: the token budget of the whole eval
(``--max-tokens``), and the plan a dry run (``--dry-run``) prints without a request.

:class:`TokenBudget` is shared by every run of an eval, whichever thread it runs in: each
answer's ``usage.total_tokens`` is added as it comes (recorded or replayed), and a run starts
only while the sum is below the limit.  Runs already going on finish (a run cut in the middle
would measure nothing), so an eval may end above its budget by what those runs spend.

:class:`PlannedConversation` and :func:`dry_run_text` describe conversations before any of
them is had: for each, the upper bound of its requests and, when a cassette of it was
recorded, the tokens that recording used.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...harness.cassette_document import CassetteDocument
from ..documents.document_io import read_document

#: ``result.stop_reason`` of a run: stopped by the turn limit, by its token cap, or never
#: started because the eval's token budget was spent.
TURN_LIMIT, RUN_TOKENS, BUDGET = "turn_limit", "run_tokens", "budget"


#: What the trigger runs never started are left out of.
UNJUDGED = "neither judged nor errors"


def never_started(skipped: int, runs: int, counted: str) -> str:
    """The runs of ``runs`` never started for the budget, as every output says it (the
    terminal, pytest, benchmark.md and its notes, the report); ``counted``: what they are left
    out of (``counted in neither pass nor error``)."""
    return (
        f"{skipped} of {runs} runs were never started: the token budget (--max-tokens) was"
        f" spent; {counted}"
    )


class TokenBudget:
    """The tokens an eval may spend (``limit`` None: no limit), counted from every thread."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._spent = 0
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        with self._lock:
            return self._spent

    def spend(self, tokens: int) -> None:
        """Count ``tokens`` more (an answer's ``usage.total_tokens``)."""
        if tokens > 0:
            with self._lock:
                self._spent += tokens

    def allows_start(self) -> bool:
        """Whether a new run may start: the budget is not spent yet."""
        if self.limit is None:
            return True
        with self._lock:
            return self._spent < self.limit

    def describe(self) -> str:
        """``1234 of 2000 tokens`` (or ``1234 tokens`` without a limit), for messages."""
        spent = self.spent
        return f"{spent} tokens" if self.limit is None else f"{spent} of {self.limit} tokens"


@dataclass(frozen=True)
class PlannedConversation:
    """One conversation a dry run lists: what it is, its prompt, the most requests it may
    make, and the cassettes a recording of it would be in."""

    label: str
    prompt: str
    max_requests: int
    cassettes: tuple[Path, ...] = ()

    def recorded_tokens(self) -> int | None:
        """The ``usage.total_tokens`` of its recorded answers; None when none is recorded. A
        file that is not a cassette is refused (:class:`DocumentError`)."""
        recorded = [
            read_document(CassetteDocument, path) for path in self.cassettes if path.is_file()
        ]
        if not recorded:
            return None
        answers = [item.response for cassette in recorded for item in cassette.interactions]
        return sum(_answer_tokens(answer) for answer in answers)


def _answer_tokens(response: dict[str, Any]) -> int:
    """An answer's ``usage.total_tokens`` (the model's body, kept as it came: 0 without one)."""
    body = response.get("body")
    usage = body.get("usage") if isinstance(body, dict) else None
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    return tokens if type(tokens) is int and tokens > 0 else 0


def dry_run_text(
    title: str, planned: Sequence[PlannedConversation], notes: Iterable[str] = ()
) -> str:
    """What a dry run prints: one line per conversation (its label, the most requests it may
    make, the tokens its recording used, its prompt), then the totals."""
    lines = [f"dry run: {title}: {len(planned)} conversation(s), no request made"]
    recorded: list[int] = []  # the tokens of the conversations recorded
    for item in planned:
        tokens = item.recorded_tokens()
        if tokens is not None:
            recorded.append(tokens)
        used = "not recorded" if tokens is None else f"recorded {tokens} tokens"
        prompt = " ".join(item.prompt.split())
        shown = prompt if len(prompt) <= 100 else prompt[:97] + "..."
        lines.append(f"  {item.label}: at most {item.max_requests} request(s), {used}: {shown}")
    lines.append(
        f"at most {sum(item.max_requests for item in planned)} model request(s) in all;"
        f" {len(recorded)} of {len(planned)} conversation(s) recorded, {sum(recorded)} tokens"
    )
    lines.extend(notes)
    return "\n".join(lines)
