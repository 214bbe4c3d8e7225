"""Item properties in JUnit XML.

pytest writes an item's ``user_properties`` as ``<properties>`` inside its ``<testcase>``,
which only the xunit1 (legacy) schema allows; under the default ``junit_family=xunit2`` that
makes the report invalid (as pytest's ``record_property`` documents).  So the plugin adds its
properties (``skill_name``, ``skill_path``, ``skill_check``, ``scenario``) only under xunit1;
under xunit2 the test case's ``classname`` and ``name`` already say the file and the check.
"""

from __future__ import annotations

import pytest


def with_testcase_properties(config: pytest.Config) -> bool:
    """Whether per-testcase properties are valid in this run's JUnit XML (or there is none)."""
    try:
        family = config.getini("junit_family")
    except ValueError:  # the junitxml plugin is disabled: no XML report to keep valid
        return True
    return family in ("xunit1", "legacy")
