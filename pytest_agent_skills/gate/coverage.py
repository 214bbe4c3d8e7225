"""Which tests each skill has: evals (``evals/evals.json``), trigger queries
(``evals/triggers.json``), scenarios (``*.scenario.yaml`` in its folder), and for each whether
it is recorded, so that a CI run replays it offline.

An eval is recorded when its folder of cassettes (``<cassettes>/<skill>/eval-<id>/``) holds a
run's recording; a trigger query when ``<cassettes>/<skill>/triggers/query-<i>/`` (its eval's
runs) or ``triggers-matrix/query-<i>/`` (the trigger matrix's) does; a scenario when it has a
script or its cassette file exists.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import AgentSkillsError
from ..filenames import SCENARIO_SUFFIX, SKILL_FILE
from ..skill import Skill
from .coverage_model import CoverageReport, CoverageSummary, KindCoverage, SkillCoverage

#: The cassette folders of a skill's trigger runs: ``eval --triggers``'s, the matrix's.
TRIGGER_RECORDINGS = ("triggers", "triggers-matrix")


def _has_recording(folder: Path) -> bool:
    """Whether ``folder`` (a cassette folder of one eval or query) holds a recording."""
    return folder.is_dir() and any(path.suffix == ".json" for path in folder.rglob("*.json"))


def eval_coverage(skill: Skill, cassettes: Path) -> KindCoverage:
    from ..evals.setup.eval_files import EVALS_FILE, load_evals

    if not (skill.directory / EVALS_FILE).is_file():
        return KindCoverage(count=0, recorded=0)
    try:
        cases = load_evals(skill.directory, skill.name).evals
    except AgentSkillsError as error:
        return KindCoverage(count=0, recorded=0, error=str(error))
    recorded = sum(_has_recording(cassettes / f"eval-{case.id}") for case in cases)
    return KindCoverage(count=len(cases), recorded=recorded)


def trigger_coverage(skill: Skill, cassettes: Path) -> KindCoverage:
    from ..evals.setup.eval_files import TRIGGERS_FILE, load_triggers

    if not (skill.directory / TRIGGERS_FILE).is_file():
        return KindCoverage(count=0, recorded=0)
    try:
        queries = load_triggers(skill.directory)
    except AgentSkillsError as error:
        return KindCoverage(count=0, recorded=0, error=str(error))
    recorded = sum(
        any(_has_recording(cassettes / kind / f"query-{index}") for kind in TRIGGER_RECORDINGS)
        for index in range(1, len(queries) + 1)
    )
    return KindCoverage(count=len(queries), recorded=recorded)


def scenario_files(folder: Path) -> list[Path]:
    """The ``*.scenario.yaml`` files of a skill folder (not of a skill nested in it), sorted."""
    found = []
    for current, dirnames, filenames in os.walk(folder):
        if current != str(folder) and SKILL_FILE in filenames:
            dirnames[:] = []
            continue
        dirnames[:] = [name for name in dirnames if not name.startswith(".")]
        found += [Path(current) / name for name in filenames if name.endswith(SCENARIO_SUFFIX)]
    return sorted(found)


def scenario_coverage(skill: Skill) -> KindCoverage:
    from ..scenario import load_scenarios

    count = recorded = 0
    errors = []
    for path in scenario_files(skill.directory):
        try:
            scenarios = load_scenarios(path)
        except AgentSkillsError as error:
            errors.append(str(error))
            continue
        for scenario in scenarios:
            count += 1
            turns = scenario.turns or ()
            recorded += bool(
                scenario.script is not None
                or (scenario.cassette is not None and scenario.cassette.is_file())
                or (turns and all(turn.script is not None for turn in turns))
            )
    return KindCoverage(count=count, recorded=recorded, error="; ".join(errors))


def skill_coverage(skill: Skill, cassettes: Path) -> SkillCoverage:
    """What tests ``skill`` has, its recordings looked for under ``cassettes/<name>``."""
    folder = cassettes / skill.name
    evals = eval_coverage(skill, folder)
    triggers = trigger_coverage(skill, folder)
    tested = [kind for kind in (evals, triggers) if kind.count]
    return SkillCoverage(
        name=skill.name,
        path=str(skill.directory),
        evals=evals,
        triggers=triggers,
        scenarios=scenario_coverage(skill),
        covered=bool(tested) and all(kind.recorded == kind.count for kind in tested),
    )


def coverage_report(
    folders: Sequence[Path], cassettes: Path, min_coverage: float
) -> CoverageReport:
    """The coverage of the skills in ``folders``."""
    skills = [skill_coverage(skill, cassettes) for skill in Skill.load_all(list(folders))]
    covered = sum(skill.covered for skill in skills)
    summary = CoverageSummary(
        skills=len(skills),
        with_evals=sum(bool(skill.evals.count) for skill in skills),
        with_triggers=sum(bool(skill.triggers.count) for skill in skills),
        with_scenarios=sum(bool(skill.scenarios.count) for skill in skills),
        covered=covered,
        coverage=round(covered / len(skills), 4) if skills else 1.0,
    )
    return CoverageReport(
        cassettes=str(cassettes), min_coverage=min_coverage, skills=skills, summary=summary
    )


def to_text(report: CoverageReport) -> str:
    """A line per skill (each kind: recorded/count), the totals and the gate."""
    lines = []
    for skill in report.skills:
        kinds = ", ".join(
            f"{label} {kind.recorded}/{kind.count}" + (" (unreadable)" if kind.error else "")
            for label, kind in (
                ("evals", skill.evals),
                ("trigger queries", skill.triggers),
                ("scenarios", skill.scenarios),
            )
        )
        mark = "ok  " if skill.covered else "none" if not (skill.evals.count or
                                                            skill.triggers.count) else "part"
        lines.append(f"{mark}  {skill.path}: {kinds} recorded")
    summary = report.summary
    lines.append(
        f"{summary.covered} of {summary.skills} skill(s) covered ({summary.coverage:.0%}): evals"
        f" in {summary.with_evals}, trigger queries in {summary.with_triggers}, scenarios in"
        f" {summary.with_scenarios}; recordings looked for in {report.cassettes}"
    )
    if report.min_coverage:
        verdict = "met" if report.passed else "NOT met"
        lines.append(f"--min-coverage {report.min_coverage:.0%}: {verdict}")
    return "\n".join(lines) + "\n"
