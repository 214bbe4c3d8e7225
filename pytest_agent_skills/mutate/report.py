"""The mutation report: one typed document (:class:`MutationReport`, whose JSON Schema ships
as ``schemas/mutation.schema.json``), written as JSON or as text (survivors first, each with
its diff and the kind of assertion that would kill it)."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..typed_documents import schema_field
from .operators import OPERATORS
from .runner import ERROR, KILLED, SURVIVED, TIMEOUT, MutationRun

Status = Literal["killed", "survived", "error", "timeout"]

#: Per operator: the kind of assertion that notices it (the text report's hint).
HINTS: dict[str, str] = {
    "arithmetic": "check the numbers the script writes (expect files: contains the exact"
    " total, or compare with an expected file)",
    "comparison": "add an input on the boundary and check the result it gives",
    "constant": "check the exact values of the output, not only that it exists",
    "swapped-call": "use inputs where the smallest and the largest differ, and check which"
    " the output holds",
    "deleted-statement": "check every effect of the script: its output file's content, its"
    " stdout, its exit code on bad input",
    "early-exit": "check the output file exists and holds the result (files: contains), not"
    " only exit_code 0",
    "unwritten-output": "expect the output file (files: path + contains) or check output_files",
    "deleted-step": "check what the model was shown (requests: system_contains the step) or"
    " the result the step produces",
    "deleted-paragraph": "check the prompt after skill_load (requests: system_contains a"
    " phrase of the paragraph)",
    "dropped-constraint": "check the prompt keeps the constraint (requests: system_contains"
    " 'never ...') or a scenario that tempts the model to break it",
    "changed-command": "check the loaded body shows the command the script needs"
    " (requests: system_contains the command line)",
    "removed-doc": "select the doc in a scenario (skill_select_docs) and check its text"
    " reached the model",
    "broken-link": "check the loaded body keeps the link (requests: system_contains"
    " '[text](docs/...)'), or run the validation (pytest's SKILL.md items) beside the"
    " scenarios: its references rule finds a link that does not resolve",
    "narrowed-description": "check the listing the model sees before loading (requests:"
    " turn 0 system_contains the 'Use when' clause), or trigger queries",
    "broadened-description": "add should-not-trigger queries, or check the listing's exact"
    " description",
    "truncated-description": "check the whole description reaches the listing (requests:"
    " turn 0 system_contains its last words)",
}


class MutantEntry(BaseModel):
    """One mutant and its fate."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="the mutant's id in this run (M01, M02...)")
    operator: str = Field(description="the mutation operator (docs/mutation.md lists them)")
    file: str = Field(description="the file changed, relative to the skill folder")
    line: int = Field(description="the line of the change (1: a removed file)")
    status: Status
    killed_by: str | None = Field(
        description="the first check that failed on the mutant"
    )
    diff: str = Field(description="the change as a unified diff")


class MutationSummary(BaseModel):
    """The counts; ``errors`` are the mutants that broke the tooling or ran out of time,
    counted apart from the score."""

    model_config = ConfigDict(extra="forbid")

    mutants: int
    killed: int
    survived: int
    errors: int
    score: float | None = Field(
        description="killed / (killed + survived); null when no mutant was judged"
    )


class MutationReport(BaseModel):
    """``agent-skills mutate``'s JSON report."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_url: str = schema_field("mutation")
    skill: str = Field(description="the skill's name")
    mutants: list[MutantEntry]
    summary: MutationSummary

    def to_json(self) -> str:
        return json.dumps(self.model_dump(by_alias=True), indent=2) + "\n"


def build_report(skill: str, run: MutationRun) -> MutationReport:
    entries = [
        MutantEntry(
            id=mutant.id, operator=mutant.operator, file=mutant.file, line=mutant.line,
            status=verdict.status,  # type: ignore[arg-type]
            killed_by=verdict.killed_by, diff=mutant.diff,
        )
        for mutant, verdict in zip(run.mutants, run.verdicts, strict=True)
    ]
    killed = sum(1 for entry in entries if entry.status == KILLED)
    survived = sum(1 for entry in entries if entry.status == SURVIVED)
    judged = killed + survived
    return MutationReport(
        skill=skill,
        mutants=entries,
        summary=MutationSummary(
            mutants=len(entries), killed=killed, survived=survived,
            errors=sum(1 for entry in entries if entry.status in (ERROR, TIMEOUT)),
            score=round(killed / judged, 4) if judged else None,
        ),
    )


def score_text(report: MutationReport) -> str:
    summary = report.summary
    score = "n/a" if summary.score is None else f"{summary.score:.2f}"
    return (
        f"mutation score {score}: {summary.killed} killed, {summary.survived} survived,"
        f" {summary.errors} error(s)/timeout(s) of {summary.mutants} mutants"
    )


def text_report(report: MutationReport, run: MutationRun) -> str:
    """Survivors first (each with its diff and a hint), then the errors, then the killed."""
    out = [f"skill {report.skill}: {len(run.passing)} of {len(run.original)} check(s) pass on"
           " the original"]
    for failure in run.original:
        if failure is not None:
            out.append(f"  not used (fails on the original): {failure.check}: {failure.why}")
    survivors = [entry for entry in report.mutants if entry.status == SURVIVED]
    if survivors:
        out.append("")
        out.append(f"{len(survivors)} SURVIVED (no check noticed):")
    for entry in survivors:
        out.append(f"{entry.id} {entry.operator} {entry.file}:{entry.line} survived")
        out.append(f"  hint: {HINTS.get(entry.operator, OPERATORS[entry.operator][1])}")
        out.extend("  " + line for line in entry.diff.rstrip("\n").splitlines())
    for entry, verdict in zip(report.mutants, run.verdicts, strict=True):
        if entry.status in (ERROR, TIMEOUT):
            out.append(f"{entry.id} {entry.operator} {entry.file}:{entry.line} {entry.status}:"
                       f" {verdict.detail}")
    for entry in report.mutants:
        if entry.status == KILLED:
            out.append(f"{entry.id} {entry.operator} {entry.file}:{entry.line} killed by"
                       f" {entry.killed_by}")
    out.append("")
    made, saved = run.requests
    if made:
        out.append(saving_text(made, saved))
    out.append(score_text(report))
    return "\n".join(out) + "\n"


def saving_text(made: int, saved: int) -> str:
    """What stopping a mutant's runs at its verdict saved."""
    return (
        f"model requests (agent turns and grader requests, as the runs report them): {made}"
        f" made; stopping each mutant's runs once its verdict was worse saved about {saved}"
        f" ({100 * saved / (made + saved):.0f}% of {made + saved})"
    )
