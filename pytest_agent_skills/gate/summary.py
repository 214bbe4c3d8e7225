"""The job summary of the CI gate: Markdown for ``$GITHUB_STEP_SUMMARY`` (GitHub shows it on the
run's page), with each check's outcome and numbers and the first findings; and the step's
outputs for ``$GITHUB_OUTPUT``."""

from __future__ import annotations

from collections.abc import Sequence

from .ci import CheckOutcome

#: Findings listed per check (the SARIF upload and the full reports have every one).
DETAILS_SHOWN = 20


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(outcomes: Sequence[CheckOutcome], selection: str, passed: bool) -> str:
    """The summary: a verdict, what was selected, a table of the checks, their details."""
    lines = [
        f"## Agent Skills: {'passed' if passed else 'failed'}",
        "",
    ]
    if selection:
        lines += [selection, ""]
    lines += ["| check | result | numbers |", "| --- | --- | --- |"]
    for outcome in outcomes:
        mark = "pass" if outcome.passed else "**FAIL**"
        lines.append(f"| {outcome.name} | {mark} | {_cell(outcome.line)} |")
    for outcome in outcomes:
        if not outcome.details:
            continue
        shown = outcome.details[:DETAILS_SHOWN]
        more = len(outcome.details) - len(shown)
        heading = f"{outcome.name}: {len(outcome.details)} line(s)"
        lines += ["", f"<details><summary>{heading}</summary>", ""]
        lines += [f"- {_cell(detail)}" for detail in shown]
        if more:
            lines.append(f"- ... and {more} more")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def outputs(outcomes: Sequence[CheckOutcome], extra: dict[str, str]) -> str:
    """The ``name=value`` lines of ``$GITHUB_OUTPUT``: every check's numbers and ``extra``."""
    values: dict[str, str] = {}
    for outcome in outcomes:
        values.update(outcome.numbers)
    values.update(extra)
    return "".join(f"{name}={value}\n" for name, value in values.items() if "\n" not in value)
