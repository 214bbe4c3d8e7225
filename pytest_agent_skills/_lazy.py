"""Public names a package imports on first use (a package lists ``name -> submodule``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


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
