"""An audit of many skills: each skill folder found under the paths (as ``validate`` finds
them), audited statically, then by the detonation run when asked, its findings selected and
suppressed by its own options, the whole made one :class:`~.model.AuditDocument`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from ..filenames import printable
from ..listings import FolderListings
from ..rules import skill_dirs
from .model import AuditDocument, AuditFinding, SkillAudit, summarize
from .options import AuditOptions
from .scan import audit_skill
from .seam import DynamicAnalysis, DynamicTarget


class Silenced(NamedTuple):
    """A finding a suppression of the configuration silenced, with its reason."""

    skill: SkillAudit
    finding: AuditFinding
    reason: str


class AuditRun(NamedTuple):
    """The document, the suppressed findings (not in it) and the skills that fail their
    ``fail_on``."""

    document: AuditDocument
    suppressed: list[Silenced]
    failed: list[str]


def skill_folders(
    paths: Iterable[Path],
    options: Callable[[Path], AuditOptions],
    listings: FolderListings | None = None,
) -> list[tuple[Path, AuditOptions]]:
    """Every skill folder under ``paths``, once (the first path it is found under decides its
    options)."""
    listings = listings or FolderListings()
    seen: dict[tuple[int, int], tuple[Path, AuditOptions]] = {}
    for path in paths:
        chosen = options(path)
        for folder in skill_dirs(path, listings):
            status = os.stat(folder)  # one folder however many paths lead to it
            seen.setdefault((status.st_dev, status.st_ino), (folder, chosen))
    return list(seen.values())


def audit_folders(
    folders: list[tuple[Path, AuditOptions]], analysis: DynamicAnalysis | None = None
) -> AuditRun:
    """Audit each skill folder with its options; with ``analysis`` (a started detonation
    run, see :func:`~.detonation.start_dynamic`), detonate each too."""
    started = time.monotonic()
    skills: list[SkillAudit] = []
    suppressed: list[Silenced] = []
    failed: list[str] = []
    runs = 0
    for folder, options in folders:
        audit = audit_skill(folder)
        findings = list(audit.findings)
        not_analyzed = list(audit.not_analyzed)
        if analysis is not None:
            result = analysis.analyze(DynamicTarget(audit.name, folder))
            findings += result.findings
            not_analyzed += result.not_analyzed
            runs += result.runs
        findings = [finding for finding in findings if options.runs(finding.rule)]
        reasons = [options.suppressed_by(str(folder), finding.rule) for finding in findings]
        skill = SkillAudit(
            name=printable(audit.name),
            path=printable(str(folder)),
            findings=[f for f, why in zip(findings, reasons, strict=True) if why is None],
            not_analyzed=not_analyzed,
        )
        suppressed += [
            Silenced(skill, f, why.reason)
            for f, why in zip(findings, reasons, strict=True)
            if why is not None
        ]
        skills.append(skill)
        if any(options.fails(finding.severity) for finding in skill.findings):
            failed.append(skill.path)
    summary = summarize(skills, runs, time.monotonic() - started)
    return AuditRun(AuditDocument(skills=skills, summary=summary), suppressed, failed)
