"""Plain value classes: equality, hash and ``repr`` from the fields a class names, and frozen
instances, for the values that ``agent-skills validate`` makes.

Why not ``@dataclass``: validation is a short program (pre-commit and CI start it for every
change), and there a dataclass costs what the checks do.  Making one compiles its methods at
import (~0.5 ms each), and importing :mod:`dataclasses` imports :mod:`inspect` (~6 ms): the
seventeen on the validation path were about a seventh of a run over a hundred skills.  The
values there are :class:`typing.NamedTuple` where a tuple fits; these base classes serve the
few that do not (a value that computes attributes on first use, or checks its fields).
"""

from __future__ import annotations

from typing import Any, ClassVar


class Value:
    """Compared, hashed and shown by the attributes named in ``_fields``, like a dataclass."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"


class FrozenValue(Value):
    """A :class:`Value` whose attributes are set once, by :meth:`_set` in ``__init__``
    (attributes computed on first use are kept in ``__dict__`` directly)."""

    __slots__ = ()

    def _set(self, *values: Any) -> None:
        """The fields' values, in the order of ``_fields``."""
        self.__dict__.update(zip(self._fields, values, strict=True))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")
