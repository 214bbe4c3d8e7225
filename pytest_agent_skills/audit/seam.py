"""The seam between the audit command and the detonation run (``--dynamic``).

The command builds a :class:`DynamicOptions`, asks :func:`start_dynamic` for a
:class:`DynamicAnalysis` once per run, calls :meth:`DynamicAnalysis.analyze` for each skill
(its findings carry ``analysis="dynamic"``) and closes it at the end.  A run that cannot
happen (no isolated runtime, the run not built) raises :class:`DynamicUnavailableError`
with the reason: ``--dynamic`` never passes silently.
"""

from __future__ import annotations

from .dynamic_types import (
    DynamicAnalysis,
    DynamicOptions,
    DynamicResult,
    DynamicTarget,
    DynamicUnavailableError,
)

__all__ = [
    "DynamicAnalysis",
    "DynamicOptions",
    "DynamicResult",
    "DynamicTarget",
    "DynamicUnavailableError",
    "start_dynamic",
]


def start_dynamic(options: DynamicOptions) -> DynamicAnalysis:
    """The detonation run of ``options``, ready for its first skill; raises
    :class:`DynamicUnavailableError` when it cannot run here (no isolated runtime: it never
    runs a skill on the host)."""
    from .detonation import start_detonation

    return start_detonation(options)
