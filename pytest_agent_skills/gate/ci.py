"""The checks of the CI gate (``agent-skills ci``, the step of ``action.yml``): each one run
over the skills of a repository (or the skills a change touches), its outcome and numbers, the
SARIF file of the findings.

validate, tokens and coverage run in this process; the audit, the eval and trigger replays and
pytest run as processes of their own (``agent-skills audit``, ``agent-skills eval`` per skill
with evals, ``agent-skills triggers``, ``python -m pytest``), the replays from recorded
cassettes: a gate makes no model request.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AgentSkillsError
from ..settings import SettingValues

#: Every check, in the order they run; those run when none is named.
CHECKS = ("validate", "audit", "tokens", "coverage", "triggers", "eval", "pytest")
DEFAULT_CHECKS = ("validate", "tokens", "coverage")
#: What fails the gate: errors (the default), warnings too, or nothing (report only).
FAIL_ON = ("error", "warning", "never")


class GateError(AgentSkillsError):
    """The gate was asked for something it cannot do (an unknown check, a bad value)."""


@dataclass
class CheckOutcome:
    """One check: whether it passed, a line for the summary, its numbers."""

    name: str
    passed: bool
    line: str
    numbers: dict[str, str] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GateRequest:
    """What the gate runs: the skill folders, the checks, what fails it, where it writes."""

    folders: tuple[Path, ...]
    checks: tuple[str, ...]
    fail_on: str
    workspace: Path
    sarif: Path | None
    #: What ``--changed-since`` left out (a line for the summary; '' when all run).
    selection: str = ""
    #: The git ref the change is measured from ('' when all skills run).
    changed_since: str = ""
    #: Whether the change reaches every skill's trigger runs (a description changed).
    triggers_all: bool = False
    #: Every skill folder (the trigger matrix offers them all).
    every_folder: tuple[Path, ...] = ()


def parse_checks(text: str) -> tuple[str, ...]:
    """``validate,tokens`` -> the checks, in run order; an unknown one is a :class:`GateError`."""
    named = [word.strip() for word in text.replace(" ", ",").split(",") if word.strip()]
    if not named:
        return DEFAULT_CHECKS
    unknown = [word for word in named if word not in CHECKS]
    if unknown:
        raise GateError(
            f"--checks: unknown check(s) {', '.join(unknown)} (choose from {', '.join(CHECKS)})"
        )
    return tuple(check for check in CHECKS if check in named)


def run_validate(request: GateRequest) -> CheckOutcome:
    from ..filenames import SKILL_FILE
    from ..rules import summary, to_sarif, validate_paths

    reports = validate_paths([folder / SKILL_FILE for folder in request.folders])
    if request.sarif is not None:
        from ..files import write_atomic

        write_atomic(request.sarif, to_sarif(reports, base=request.workspace))
    totals = summary(reports)
    failing = totals["errors"] + (totals["warnings"] if request.fail_on == "warning" else 0)
    details = [
        f"`{_shown(finding.path, request.workspace)}:{finding.line or 1}` {finding.severity}"
        f" [{finding.rule}] {finding.message}"
        for report in reports
        for finding in report.findings
    ]
    return CheckOutcome(
        "validate",
        failing == 0,
        f"{totals['skills']} skill(s): {totals['errors']} error(s), {totals['warnings']}"
        f" warning(s)",
        {"findings": str(totals["errors"] + totals["warnings"]), "errors": str(totals["errors"])},
        details,
    )


def run_tokens(request: GateRequest, values: SettingValues) -> CheckOutcome:
    from .tokens_command import token_budgets, token_report

    budgets = token_budgets(values)
    report = token_report(request.folders, budgets, None, 0.0)
    largest = max((skill.body for skill in report.skills), default=0)
    errors = [over for over in report.over if over.severity == "error"]
    failing = errors if request.fail_on != "warning" else report.over
    return CheckOutcome(
        "tokens",
        not failing,
        f"listing {report.listing:,} tokens (budget {budgets.listing:,}); largest body"
        f" {largest:,}; {len(report.over)} over a budget",
        {"tokens-listing": str(report.listing), "tokens-over-budget": str(len(report.over))},
        [
            f"{over.severity} [{over.rule}] {over.skill or 'all skills'}: {over.part}"
            f" {over.tokens:,} > {over.budget:,}"
            for over in report.over
        ],
    )


def run_coverage(request: GateRequest, values: SettingValues) -> CheckOutcome:
    from .coverage import coverage_report
    from .coverage_command import cassettes_folder, min_coverage

    minimum = min_coverage(values)
    report = coverage_report(request.folders, cassettes_folder(values), minimum)
    summary = report.summary
    return CheckOutcome(
        "coverage",
        report.passed or request.fail_on == "never",
        f"{summary.covered} of {summary.skills} skill(s) covered ({summary.coverage:.0%}; gate"
        f" {minimum:.0%}): evals in {summary.with_evals}, trigger queries in"
        f" {summary.with_triggers}, scenarios in {summary.with_scenarios}",
        {"coverage": f"{summary.coverage:.4f}", "covered": str(summary.covered)},
        [
            f"`{_shown(Path(skill.path), request.workspace)}` has no recorded evals or trigger"
            " queries"
            for skill in report.skills
            if not skill.covered
        ],
    )


def run_process(name: str, command: Sequence[str], workspace: Path) -> CheckOutcome:
    """A check run as a process in ``workspace``: it passes when it exits 0."""
    done = subprocess.run(
        list(command), cwd=workspace, capture_output=True, text=True, check=False
    )
    tail = (done.stdout + done.stderr).strip().splitlines()[-12:]
    return CheckOutcome(
        name,
        done.returncode == 0,
        f"`{' '.join(command[2:] if command[:2] == [sys.executable, '-m'] else command)}`"
        f" exited {done.returncode}",
        {},
        tail,
    )


def process_commands(request: GateRequest) -> list[tuple[str, list[str]]]:
    """The audit, the eval and trigger replays and the pytest run the request asks for, as
    commands.

    The trigger matrix offers every skill; with ``--changed-since`` it runs when a changed
    skill has trigger queries, or when the change reaches every skill (a description)."""
    from ..evals.setup.eval_files import EVALS_FILE, TRIGGERS_FILE

    program = [sys.executable, "-m", "pytest_agent_skills.cli"]
    commands: list[tuple[str, list[str]]] = []
    if "audit" in request.checks and request.folders:
        commands.append(("audit", [*program, "audit", *map(str, request.folders)]))
    offered = request.every_folder or request.folders
    queried = [folder for folder in request.folders if (folder / TRIGGERS_FILE).is_file()]
    if "triggers" in request.checks and (queried or request.triggers_all):
        matrix = [*program, "triggers", "--record", "none", "-q", "--out", _out("triggers")]
        commands.append(("triggers", [*matrix, *map(str, offered)]))
    if "eval" in request.checks:
        for folder in request.folders:
            if (folder / EVALS_FILE).is_file():
                out = _out(f"eval-{folder.name}")
                replay = [*program, "eval", "--record", "none", "--out", out, str(folder)]
                commands.append((f"eval {folder.name}", replay))
    if "pytest" in request.checks:
        since = request.changed_since
        changed = ["--skills-changed-since", since] if since else []
        commands.append(("pytest", [sys.executable, "-m", "pytest", "-q", *changed]))
    return commands


def _out(name: str) -> str:
    """A folder for a replay's output, in the runner's temporary folder (RUNNER_TEMP)."""
    import tempfile

    temporary = os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()
    return str(Path(temporary) / "agent-skills" / name)


def _shown(path: Path, workspace: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(workspace)).as_posix()
    except ValueError:
        return str(path)
