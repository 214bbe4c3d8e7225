"""The nox sessions check the ends of the ranges pyproject.toml declares: their oldest end is each
dependency's lower bound and the oldest Python it allows, their newest stays under each upper
bound and runs the newest Python its classifiers name."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


@functools.cache  # nox refuses a session registered twice
def _noxfile() -> Any:
    spec = importlib.util.spec_from_file_location("noxfile", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    return project


def _declared() -> dict[str, Requirement]:
    requirements = (Requirement(line) for line in _project()["dependencies"])
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


def test_the_pythons_of_the_ends_are_those_requires_python_and_the_classifiers_name() -> None:
    """The oldest end runs the oldest Python requires-python allows, the newest the newest the
    classifiers name, and the classifiers name every minor version between: what is tested."""
    noxfile = _noxfile()
    project = _project()
    assert tuple(noxfile.PYTHONS) == noxfile.ENDS
    oldest, newest = (Version(noxfile.PYTHONS[end]) for end in noxfile.ENDS)
    assert SpecifierSet(project["requires-python"]) == SpecifierSet(f">={oldest}")
    prefix = "Programming Language :: Python :: "
    named = [
        Version(classifier.removeprefix(prefix))
        for classifier in project["classifiers"]
        if classifier.startswith(prefix) and "." in classifier.removeprefix(prefix)
    ]
    assert named == [Version(f"3.{minor}") for minor in range(oldest.minor, newest.minor + 1)]
