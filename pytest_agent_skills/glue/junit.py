"""Item properties in JUnit XML.

pytest writes an item's ``user_properties`` as ``<properties>`` inside its ``<testcase>``,
which only the xunit1 (legacy) schema allows; under the default ``junit_family=xunit2`` that
makes the report invalid (as pytest's ``record_property`` documents).  So the plugin adds its
properties (``skill_name``, ``skill_path``, ``skill_check``, ``scenario``) only under xunit1;
under xunit2 the test case's ``classname`` and ``name`` already say the file and the check.

The ``classname`` is the node id's path: for a file under a folder whose name is not UTF-8,
pytest's own node id would make writing the report crash, so the plugin's files get a
:func:`printable_node_id` instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..filenames import printable


def with_testcase_properties(config: pytest.Config) -> bool:
    """Whether per-testcase properties are valid in this run's JUnit XML (or there is none)."""
    try:
        family = config.getini("junit_family")
    except ValueError:  # the junitxml plugin is disabled: no XML report to keep valid
        return True
    return family in ("xunit1", "legacy")


def printable_node_id(parent: pytest.Collector | pytest.Session, path: Path) -> str | None:
    """The ``nodeid`` for ``from_parent`` when ``path`` (relative to the rootdir) has bytes that
    are not UTF-8, written ``\\xNN``; ``None`` (pytest's own node id) otherwise.

    A keyword of its own rather than ``**{"nodeid": ...}``: pytest 9.2 types ``from_parent``'s
    ``fspath`` as ``None``, which a ``dict[str, str]`` spread into it would not meet."""
    try:
        relative = str(path.relative_to(parent.config.rootpath))
    except ValueError:
        return None
    shown = printable(relative)
    return None if shown == relative else shown.replace(os.sep, "/")
