"""Lazy things: public names a package imports on first use (a package lists ``name ->
submodule``), and attributes computed on first use (:class:`cached_attribute`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, overload


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, importing ``.<submodule>`` on first use.

    The name is not stored in the package: each use gives the object of the submodule as
    ``sys.modules`` has it now.  pytester's in-process runs drop the modules a run imported;
    a package that kept a name from an earlier run would hand out a dropped module's object
    (its classes and enums differ from the ones the modules imported afresh use).
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f".{module}", package), name)

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


_T = TypeVar("_T")


class cached_attribute(Generic[_T]):  # named as functools.cached_property, which it replaces
    """``functools.cached_property`` without its lock: computed on first access and kept in
    the instance's ``__dict__`` (so later reads are plain attribute reads).

    Python 3.11's ``cached_property`` takes a lock on every first access, which cost more
    than some of the values it guards when validation reads thousands of skills.  The
    objects using this are built and read by one thread; two threads racing on a first
    access would both compute the same value.
    """

    def __init__(self, function: Callable[[Any], _T]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_attribute[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = self.function(instance)
        instance.__dict__[self.name] = value
        return value
