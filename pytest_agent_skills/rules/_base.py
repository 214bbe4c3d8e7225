"""What every rule module shares: the shape of a raw finding and of a rule function."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..skill import Skill
from ._options import ValidationOptions


class Hit(NamedTuple):
    """A rule firing: the rule id, the 1-based line (or None) and the message with its fix."""

    rule: str
    line: int | None
    message: str


RuleFunction = Callable[[Skill, ValidationOptions], Iterator[Hit]]
