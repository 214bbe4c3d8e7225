"""The ``add`` / ``replace`` / ``clear`` rules of ``skill_select_docs`` and ``skill_select_tools``.

Where 1.2.0 is rough we do what a caller expects (see docs/protocol.md):
``replace`` with explicit names replaces a previous ``"*"`` (1.2.0 ignores
the names and keeps ``"*"``), and ``add`` keeps the previous order and
appends new names once (1.2.0 returns set order).  ``replace`` keeps the
names as given, duplicates included, as 1.2.0 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .state import Selection

Mode = Literal["add", "replace", "clear"]
MODES: tuple[str, ...] = ("add", "replace", "clear")
DEFAULT_MODE: Mode = "replace"


def apply_selection(
    previous: Selection | None, mode: str, names: Sequence[str], include_all: bool
) -> Selection:
    if mode == "clear":
        return Selection()
    if include_all:
        return Selection(include_all=True)
    if mode == "add":
        if previous is not None and previous.include_all:
            return previous
        before = previous.names if previous is not None else ()
        return Selection(names=tuple(dict.fromkeys((*before, *names))))  # once each, in order
    return Selection(names=tuple(names))
