"""A grader's pass counts only with its evidence: a quote found in the run.

The grader answers each expectation with ``quotes`` beside its ``evidence``: verbatim excerpts
of the agent's transcript (its messages, tool calls and results, final answer) or of an output
file.  A pass is kept when at least one quote is found there, after whitespace is collapsed
and case folded; otherwise it is recorded as ``passed: false, supported: false``, its quotes
kept to show what was not there.  The user's message is not part of what a quote may come
from: a restated question is no evidence of what the agent did.  ``--trust-grader`` takes the
passes as the grader gave them (``supported: null``, not checked).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..documents.benchmark_model import ExpectationVerdict
from .grader import AGENT_MARKERS

#: Characters a quote must have (whitespace collapsed, quote marks stripped) to count as
#: found: a word or two of the run quoted (``"the"``, ``"3"``) shows nothing.
MIN_QUOTE_CHARS = 4
#: Marks a grader wraps a quote in, or cuts it with, stripped before it is looked for.
_WRAPPING = " \t\n\"'`“”‘’«»…."


def normalised(text: str) -> str:
    """``text`` with its whitespace collapsed to single spaces and its case folded."""
    return " ".join(text.split()).casefold()


def quotable(transcript: str, files: str) -> str:
    """What a quote may come from, normalised: the grading request's transcript without the
    user's message (the lines before the agent's first turn, tool call or final answer), and
    the output files."""
    lines = transcript.splitlines()
    start = next(
        (index for index, line in enumerate(lines) if line.startswith(AGENT_MARKERS)),
        len(lines),
    )
    return normalised("\n".join([*lines[start:], files]))


def found(quote: str, text: str) -> bool:
    """Whether ``quote`` is in ``text`` (already :func:`normalised`)."""
    wanted = normalised(quote).strip(_WRAPPING)
    return len(wanted) >= MIN_QUOTE_CHARS and wanted in text


def checked(graded: Sequence[ExpectationVerdict], text: str) -> list[ExpectationVerdict]:
    """``graded`` with each pass whose quotes are none of them in ``text`` (see
    :func:`quotable`) turned into an unsupported fail; every other verdict ``supported``."""
    result = []
    for item in graded:
        if not item.passed or any(found(quote, text) for quote in item.quotes):
            result.append(item.model_copy(update={"supported": True}))
            continue
        shown = "; ".join(repr(quote) for quote in item.quotes) or "(no quote given)"
        evidence = (
            f"unsupported: the grader passed it, but none of its quotes is in the run ({shown});"
            f" the grader's evidence: {item.evidence}"
        )
        update = {"passed": False, "evidence": evidence, "supported": False}
        result.append(item.model_copy(update=update))
    return result


def trusted(graded: Sequence[ExpectationVerdict]) -> list[ExpectationVerdict]:
    """``graded`` as the grader gave it, its quotes not checked (``--trust-grader``)."""
    return [item.model_copy(update={"supported": None}) for item in graded]
