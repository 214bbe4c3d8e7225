"""``agent-skills tokens [PATH...]``: the tokens each skill costs an agent, weighed against the
budgets; ``--compare REF`` prints each skill's change against a git ref.  Exit 0; 1 when a
budget is exceeded under ``--budget-fail`` or a skill grew past the threshold; 2 on usage
errors."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..config.command_line import check_output, write_report
from ..errors import ConfigurationError
from ..settings import REGISTRY, SettingValues
from .flags import add_report_arguments, setting_values
from .token_model import Budgets, Comparison, TokenReport

EXIT_OK = 0
EXIT_FAILED = 1

def configure(parser: argparse.ArgumentParser) -> None:
    add_report_arguments(parser, "tokens")
    parser.add_argument(
        "--compare",
        metavar="REF",
        help="print each skill's change against the skills at this git ref (HEAD~1,"
        " origin/main); fail when one grew past --threshold",
    )


def token_budgets(values: SettingValues) -> Budgets:
    """The :class:`Budgets` of the settings; a negative one is a :class:`ConfigurationError`
    naming where it was set."""
    for ini in ("skills_budget_body", "skills_budget_doc", "skills_budget_listing"):
        if values(ini) < 0:
            raise ConfigurationError(
                f"{values.origin(ini)}: {REGISTRY[ini].command_flag_name} is a number of tokens,"
                f" 0 or more, got {values(ini)!r}"
            )
    return Budgets(
        body=values("skills_budget_body"),
        doc=values("skills_budget_doc"),
        listing=values("skills_budget_listing"),
        fail=values("skills_budget_fail"),
    )


def compare_threshold(values: SettingValues) -> float:
    """The growth ``--compare`` allows a skill (``--threshold``), refused below 0."""
    threshold: float = values("skills_tokens_threshold")
    if threshold < 0:
        raise ConfigurationError(
            f"{values.origin('skills_tokens_threshold')}: --threshold is a rate, 0 or more"
            f" (0.1: a tenth more), got {threshold!r}"
        )
    return threshold


def token_report(
    folders: Sequence[Path], budgets: Budgets, compare_ref: str | None, threshold: float
) -> TokenReport:
    """The report of the skills in ``folders``."""
    from ..skill import Skill
    from .token_costs import ESTIMATOR, compare, skill_tokens, weigh

    skills = [skill_tokens(skill, str(skill.directory)) for skill in Skill.load_all(folders)]
    comparison = compare(skills, folders, compare_ref, threshold) if compare_ref else None
    return TokenReport(
        estimator=ESTIMATOR,
        budgets=budgets,
        skills=skills,
        listing=sum(skill.description for skill in skills),
        over=weigh(skills, budgets),
        compare=comparison,
    )


def failed(report: TokenReport) -> bool:
    """Whether the report fails a gate: an error-level budget exceeded, a skill grown past the
    threshold."""
    grown = report.compare is not None and any(
        change.over_threshold for change in report.compare.changes
    )
    return grown or any(over.severity == "error" for over in report.over)


def run(args: argparse.Namespace, targets: Sequence[Path]) -> int:
    from ..rules import skill_dirs

    check_output(args.output)
    values = setting_values(args, "tokens", targets[0] if targets else Path.cwd())
    threshold = compare_threshold(values)
    folders = list(dict.fromkeys(folder for path in targets for folder in skill_dirs(path)))
    report = token_report(folders, token_budgets(values), args.compare, threshold)
    if args.format == "json":
        text = report.model_dump_json(indent=2, by_alias=True) + "\n"
    else:
        text = to_text(report)
    write_report(args.output, text)
    return EXIT_FAILED if failed(report) else EXIT_OK


def to_text(report: TokenReport) -> str:
    """The report for a terminal: a line per skill, what is over a budget, the comparison."""
    lines = []
    for skill in report.skills:
        docs = sum(doc.tokens for doc in skill.docs)
        lines.append(
            f"{skill.path}: description {skill.description:,}, body {skill.body:,},"
            f" {len(skill.docs)} doc(s) {docs:,} tokens"
        )
    budgets = report.budgets
    lines.append(
        f"listing: {report.listing:,} tokens for {len(report.skills)} skill(s) (budget"
        f" {budgets.listing:,})"
    )
    for over in report.over:
        where = f"{over.skill}: {over.part}" if over.skill else over.part
        lines.append(f"{over.severity}: [{over.rule}] {where}: {over.tokens:,} tokens, over the"
                     f" budget of {over.budget:,}")
    if report.over and not budgets.fail:
        lines.append(
            f"{len(report.over)} over a budget: warnings (--budget-fail makes them errors)"
        )
    if report.compare is not None:
        lines.extend(comparison_lines(report.compare))
    lines.append(f"tokens: {report.estimator}")
    return "\n".join(lines) + "\n"


def comparison_lines(comparison: Comparison) -> list[str]:
    """Each skill's change against the ref, those past the threshold marked."""
    lines = [
        f"compared with {comparison.ref} ({comparison.commit[:7]}): a skill may grow by"
        f" {comparison.threshold:.0%}"
    ]
    for change in comparison.changes:
        if change.before is None:
            lines.append(f"  new   {change.name}: {change.after:,} tokens")
            continue
        mark = "FAIL" if change.over_threshold else "ok  "
        growth = "" if change.change is None else f" ({change.change:+.1%})"
        lines.append(f"  {mark}  {change.name}: {change.before:,} -> {change.after:,}{growth}")
    return lines
