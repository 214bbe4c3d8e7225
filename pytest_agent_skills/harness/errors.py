"""Errors of the harness: model scripts, cassettes, the agent loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AgentSkillsError

if TYPE_CHECKING:  # plain values, below every module that raises these errors
    from .outcome import CassetteUse
    from .trajectory import Trajectory


class HarnessError(AgentSkillsError):
    """Base class of the harness errors."""

    #: The conversation up to the failure; set by the agent loop.
    trajectory: Trajectory | None = None
    #: What the failed run did with its cassette; set by ``run_conversation``.
    cassette_use: CassetteUse | None = None


class ScriptExhaustedError(HarnessError):
    """The model was asked for a turn the script does not have."""


class UnusedTurnsError(HarnessError):
    """The conversation ended while the script still had turns."""


class TurnLimitError(HarnessError):
    """The model kept calling tools past the turn limit."""


class ModelError(HarnessError):
    """A model (callable script, upstream endpoint) answered something unusable."""


class NoCassetteError(HarnessError):
    """Replay was asked for a cassette file that does not exist."""


class CassetteMissError(HarnessError):
    """A request has no matching recorded interaction in the cassette."""


class UnusedInteractionsError(HarnessError):
    """The conversation ended while the cassette still had unplayed interactions."""


class CassetteFormatError(HarnessError):
    """A cassette file that cannot be read."""


class CassetteTooLargeError(HarnessError):
    """A recording over the size of a cassette that is read back: not written."""
