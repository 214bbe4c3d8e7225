"""``agent-skills ci [PATH...]``: the CI gate, as the GitHub Action's step runs it (and any CI:
GitLab, pre-commit.ci, a shell).  Runs the checks, writes the SARIF file, the Markdown summary
(to ``$GITHUB_STEP_SUMMARY`` when set) and the step's outputs (to ``$GITHUB_OUTPUT``).  Exit 0
when every check passes, 1 when one fails (0 with ``--exit-zero``: the action's verdict step
exits later, after the SARIF upload), 2 on usage errors."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..config.command_line import add_paths_argument
from ..config.file_settings import add_command_flags
from .ci import FAIL_ON, CheckOutcome, GateError, GateRequest, parse_checks
from .flags import setting_values

EXIT_OK = 0
EXIT_FAILED = 1


def configure(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument(
        "--checks",
        default="",
        help="comma-separated: validate, audit, tokens, coverage, triggers, eval, pytest"
        " (default: validate,tokens,coverage)",
    )
    parser.add_argument("--fail-on", choices=FAIL_ON, default="error",
                        help="what fails the gate (default: error)")
    parser.add_argument("--sarif", type=Path, help="write the findings as SARIF to this file")
    parser.add_argument("--summary", type=Path,
                        help="write the Markdown summary here (default: $GITHUB_STEP_SUMMARY,"
                        " else the standard output)")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 when a check fails (the outputs say exit-code=1)")
    parser.add_argument(
        "--github",
        action="store_true",
        help="as the GitHub Action's step: the options from its inputs (AGENT_SKILLS_CHECKS,"
        " _CHANGED_ONLY, _BASE_REF, _FAIL_ON), the SARIF file in $RUNNER_TEMP, --exit-zero",
    )
    add_command_flags(parser, "ci")


def run(args: argparse.Namespace, targets: Sequence[Path]) -> int:
    from ..rules import skill_dirs
    from .ci import process_commands, run_coverage, run_process, run_tokens, run_validate
    from .summary import markdown, outputs

    if args.github:
        _from_action_inputs(args, os.environ)
    checks = parse_checks(args.checks)
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
    values = setting_values(args, "ci", targets[0] if targets else Path.cwd())
    folders = list(dict.fromkeys(folder for path in targets for folder in skill_dirs(path)))
    request = _select(folders, checks, args, workspace, values("skills_changed_since"))
    outcomes: list[CheckOutcome] = []
    if "validate" in checks:
        outcomes.append(run_validate(request))
    if "tokens" in checks:
        outcomes.append(run_tokens(request, values))
    if "coverage" in checks:
        outcomes.append(run_coverage(request, values))
    for name, command in process_commands(request):
        outcomes.append(run_process(name, command, workspace))
    passed = args.fail_on == "never" or all(outcome.passed for outcome in outcomes)
    text = markdown(outcomes, request.selection, passed)
    summary_file = args.summary or os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as summary:  # the runner's file: appended
            summary.write(text)
    else:
        sys.stdout.write(text)
    status = EXIT_OK if passed else EXIT_FAILED
    extra = {"exit-code": str(status), "sarif-file": str(request.sarif or "")}
    if os.environ.get("GITHUB_OUTPUT"):
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as step_outputs:
            step_outputs.write(outputs(outcomes, extra))
    for outcome in outcomes:
        print(f"agent-skills ci: {outcome.name}: {'pass' if outcome.passed else 'FAIL'}:"
              f" {outcome.line}", file=sys.stderr)
    return EXIT_OK if args.exit_zero else status


def _from_action_inputs(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """Fill ``args`` from the action's inputs (its step's environment): the checks, what fails
    the job, the base of changed-only (the pull request's base branch, else the commit
    before), the SARIF file in the runner's temporary folder; a check's failure is told by the
    outputs, for the SARIF upload to run before the verdict."""
    args.checks = args.checks or environ.get("AGENT_SKILLS_CHECKS", "")
    fail_on = environ.get("AGENT_SKILLS_FAIL_ON") or args.fail_on
    if fail_on not in FAIL_ON:
        raise GateError(
            f"input fail-on: {fail_on!r} is not one of {', '.join(FAIL_ON)}"
        )
    args.fail_on = fail_on
    changed_only = environ.get("AGENT_SKILLS_CHANGED_ONLY", "false").strip().lower()
    if changed_only not in ("true", "false", ""):
        raise GateError(f"input changed-only: {changed_only!r} is not true or false")
    if changed_only == "true" and not args.skills_changed_since:
        base = environ.get("GITHUB_BASE_REF")
        args.skills_changed_since = environ.get("AGENT_SKILLS_BASE_REF") or (
            f"origin/{base}" if base else "HEAD~1"
        )
    if args.sarif is None:
        folder = Path(environ.get("RUNNER_TEMP") or tempfile.gettempdir())
        args.sarif = folder / "agent-skills.sarif"
    args.exit_zero = True


def _select(
    folders: list[Path],
    checks: tuple[str, ...],
    args: argparse.Namespace,
    workspace: Path,
    ref: str | None,
) -> GateRequest:
    """The request: every skill, or with a ``ref`` (``--changed-since``) those a change
    touches."""
    sarif = args.sarif if "validate" in checks else None  # the findings are validate's
    if not ref:
        return GateRequest(tuple(folders), checks, args.fail_on, workspace, sarif)
    from ..changes import changed_skills

    split = changed_skills(folders, ref, folders[0] if folders else workspace,
                           f"--changed-since {ref}")
    selection = f"Only what changed: {split.summary()}."
    if split.reaches_all:
        selection += f" {split.reach()[0].upper()}{split.reach()[1:]}."
    return GateRequest(tuple(split.kept), checks, args.fail_on, workspace, sarif, selection,
                       ref, split.reaches_all, tuple(folders))
