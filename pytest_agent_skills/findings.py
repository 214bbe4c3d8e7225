"""Findings: what validation reports about a skill, each tied to a rule id and a line."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import NamedTuple

from .errors import place
from .filenames import printable


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value


class Finding(NamedTuple):
    """One problem in one file: ``path:line: severity [rule] message``.

    ``message`` says what was found and how to fix it; ``line`` is 1-based
    (``None`` when the problem is about the whole file or folder).
    """

    rule: str
    severity: Severity
    message: str
    path: Path
    line: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def location(self) -> str:
        return place(self.path, self.line)

    def format(self) -> str:
        """The finding on one line, valid UTF-8 whatever the folder names (see
        :func:`~pytest_agent_skills.filenames.printable`)."""
        return printable(f"{self.location()}: {self.severity} [{self.rule}] {self.message}")
