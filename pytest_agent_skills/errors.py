"""The typed exceptions of pytest-agent-skills.

Every error the library raises derives from :class:`AgentSkillsError`, so a
caller can catch the whole family; each module defines its own subclasses
next to the code that raises them and re-uses the message conventions here:
name the file (and line when known), say what was found, say how to fix it.
"""

from __future__ import annotations

from pathlib import Path


def place(path: Path | str, line: int | None) -> str:
    """``path:line``, or the path alone when the line is unknown (``None`` or 0)."""
    return f"{path}:{line}" if line else str(path)


class AgentSkillsError(Exception):
    """Base class of every error raised by pytest-agent-skills."""


class ConfigurationError(AgentSkillsError):
    """A setting (flag, ini option, environment variable) has a bad value."""


class LocatedError(AgentSkillsError):
    """An error about a place in a file: ``path:line: message``."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.message = message
        super().__init__(f"{place(self.path, line)}: {message}")
