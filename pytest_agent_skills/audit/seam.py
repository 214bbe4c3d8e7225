"""The seam between the audit command and the detonation run (``--dynamic``), and the values
they exchange.

The command builds a :class:`DynamicOptions`, asks
:func:`~.detonation.start_dynamic` (imported when ``--dynamic`` is given) for a
:class:`DynamicAnalysis` once per run, calls :meth:`DynamicAnalysis.analyze` for each skill
(its findings carry ``analysis="dynamic"``) and closes it at the end.  A run that cannot
happen (no isolated runtime, the run not built) raises :class:`DynamicUnavailableError`
with the reason: ``--dynamic`` never passes silently.
"""

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
