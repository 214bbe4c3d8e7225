"""pytest glue modules: each one thin over a library API that works without pytest."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..errors import AgentSkillsError, ConfigurationError


class ItemFailed(AgentSkillsError):
    """An item of the plugin's below its bar; the message is the failure text."""


class FailureTextItem(pytest.Item):
    """An item whose typed failure (an :class:`AgentSkillsError`: :class:`ItemFailed`, a bad
    setting) is reported as its message alone, never a traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, AgentSkillsError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name


@contextlib.contextmanager
def usage_errors(kind: type[AgentSkillsError] = ConfigurationError) -> Iterator[None]:
    """An error of ``kind`` (a bad setting) as a pytest usage error: its message alone, the
    run ended before any test runs."""
    try:
        yield
    except kind as error:
        raise pytest.UsageError(str(error)) from None
