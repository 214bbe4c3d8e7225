"""The values the audit command and the detonation run exchange (see :mod:`.seam`)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple, Protocol

from ..errors import AgentSkillsError
from .model import AuditFinding, NotAnalyzed


class DynamicUnavailableError(AgentSkillsError):
    """The detonation run cannot happen here; the message says why and what to do."""


class DynamicOptions(NamedTuple):
    """What the detonation run of a whole audit is asked to do."""

    #: ``"sandbox"`` or ``"docker"``; None: the sandbox, else Docker (never the host).
    runtime: str | None = None
    #: Recorded conversations whose ``skill_run`` commands are detonated too.
    cassettes: Path | None = None


class DynamicTarget(NamedTuple):
    """One skill to detonate: its name and folder."""

    name: str
    folder: Path


class DynamicResult(NamedTuple):
    """What the detonation of one skill saw."""

    findings: list[AuditFinding]
    not_analyzed: list[NotAnalyzed]
    #: Commands run (scripts, shell blocks, recorded commands).
    runs: int


class DynamicAnalysis(Protocol):
    """A started detonation run (its runtime ready), for every skill of one audit."""

    def analyze(self, target: DynamicTarget) -> DynamicResult:
        """Detonate one skill."""

    def close(self) -> None:
        """Stop what the run started; called once, after the last skill."""
