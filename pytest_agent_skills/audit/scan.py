"""The static audit of one skill folder: its files read (:mod:`.sources`), every rule run
over each, the matches made findings with their file, line and evidence."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..filenames import SKILL_FILE
from .context import Hit, Located
from .model import AuditFinding, SkillAudit
from .rules_exec import execution
from .rules_persist import memory_poisoning, persistence
from .rules_secrets import endpoints, secrets
from .rules_text import description_claims, invisible_text, model_instructions
from .severity import Severity, rank
from .sources import OutsideLink, read_sources

Rule = Callable[[Located], Iterator[Hit]]
#: The rules run over every file.
FILE_RULES: tuple[Rule, ...] = (
    invisible_text,
    model_instructions,
    execution,
    persistence,
    memory_poisoning,
    secrets,
    endpoints,
)
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*$", re.DOTALL | re.MULTILINE)
_NAME = re.compile(r"^name:[ \t]*[\"']?([^\"'\n#]+?)[\"']?[ \t]*$", re.MULTILINE)
#: Where a link's target holds secrets: the link is then high, not medium.
_SECRET_TARGETS = re.compile(
    r"(?:^|/)(?:\.ssh|\.aws|\.config|\.gnupg|\.netrc|\.kube|\.docker)(?:/|$)|^/etc/|^/root"
)


def audit_skill(folder: Path) -> SkillAudit:
    """The static findings of the skill in ``folder`` and what was not analysed."""
    sources = read_sources(folder)
    findings: list[AuditFinding] = []
    name = folder.name or str(folder)
    for source in sources.files:
        located = Located(source)
        hits: list[Hit] = []
        for rule in FILE_RULES:
            hits.extend(rule(located))
        if source.relative == SKILL_FILE:
            front = _FRONT_MATTER.match(source.text)
            if front:
                declared = _NAME.search(front.group(1))
                name = declared.group(1).strip() if declared else name
                hits.extend(description_claims(located, front.end()))
        findings.extend(_findings(located, hits))
    findings.extend(_link_findings(sources.outside_links))
    return SkillAudit(
        name=name,
        path=str(folder),
        findings=sorted(findings, key=lambda f: (rank(f.severity), f.file, f.line or 0, f.rule)),
        not_analyzed=sources.not_analyzed,
    )


def _findings(located: Located, hits: Iterable[Hit]) -> Iterator[AuditFinding]:
    """One finding per rule and line: the gravest of its matches."""
    best: dict[tuple[str, int], Hit] = {}
    for hit in hits:
        key = (hit.rule, located.line(hit.start))
        kept = best.get(key)
        if kept is None or rank(hit.severity) < rank(kept.severity):
            best[key] = hit
    for (rule, line), hit in best.items():
        yield AuditFinding(
            rule=rule,
            severity=hit.severity,
            analysis="static",
            file=located.source.relative,
            line=line,
            message=hit.message,
            evidence=hit.evidence
            if hit.evidence is not None
            else located.evidence(hit.start, hit.end),
        )


def _link_findings(links: Iterable[OutsideLink]) -> Iterator[AuditFinding]:
    for link in links:
        secret = bool(_SECRET_TARGETS.search(link.target.replace("~", "")))
        severity: Severity = "high" if secret else "medium"
        yield AuditFinding(
            rule="link-outside",
            severity=severity,
            analysis="static",
            file=link.relative,
            line=None,
            message=f"a symbolic link out of the skill folder to {link.target!r}; not followed"
            + (" (it leads to where secrets are kept)" if secret else ""),
            evidence=f"{link.relative} -> {link.target}",
        )

