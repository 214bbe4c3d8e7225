"""The severities of audit findings, without the document model (the settings name them as
pytest starts, before anything is audited)."""

from __future__ import annotations

from typing import Literal

Severity = Literal["critical", "high", "medium", "low", "info"]
#: The severities, the gravest first.
SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low", "info")
#: What ``--fail-on`` takes: a finding of this severity or graver fails the audit.
FAIL_ON_LEVELS: tuple[Severity, ...] = SEVERITIES[:4]
DEFAULT_FAIL_ON: Severity = "high"


def rank(severity: Severity) -> int:
    """The gravity of ``severity``: 0 for critical, 4 for info (smaller is graver)."""
    return SEVERITIES.index(severity)
