"""What a run leaves: its :class:`RunOutcome`, and what it did with its cassette."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .trajectory import Trajectory

if TYPE_CHECKING:
    from ..repository import SkillRepository


@dataclass
class CassetteUse:
    """What a run did with its cassette, for the terminal summary."""

    path: Path
    mode: str
    recorded: int = 0
    replayed: int = 0
    unused: int = 0


@dataclass
class RunOutcome:
    trajectory: Trajectory
    repository: SkillRepository
    cassette: CassetteUse | None = None
