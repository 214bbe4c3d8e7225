"""The nox sessions check the ends of the ranges pyproject.toml declares: their oldest end is each
dependency's lower bound, their newest stays under its upper bound."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _noxfile() -> Any:
    spec = importlib.util.spec_from_file_location("noxfile", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _declared() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = (Requirement(line) for line in project["dependencies"])
    return {requirement.name: requirement for requirement in requirements}


def test_the_oldest_end_is_each_lower_bound_and_the_newest_keeps_the_upper() -> None:
    noxfile = _noxfile()
    declared = _declared()
    assert set(noxfile.LOWER_BOUNDS) == set(noxfile.UPPER_BOUNDS)
    for name, bound in noxfile.LOWER_BOUNDS.items():
        lower = [spec.version for spec in declared[name].specifier if spec.operator == ">="]
        assert lower == [bound], (name, lower, bound)
    for name, bound in noxfile.UPPER_BOUNDS.items():
        upper = {str(spec) for spec in declared[name].specifier if spec.operator == "<"}
        assert upper == ({bound} if bound else set()), (name, upper)
