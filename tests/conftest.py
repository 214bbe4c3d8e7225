"""Shared by every test module.

pytester's inline runs (``runpytest``) drop the modules first imported during a run. The plugin
imports PyYAML only when a skill or scenario is parsed, so that would happen inside such a run;
PyYAML's C loader keeps the node classes of its first import, and a re-imported ``yaml`` module
would no longer recognise them. Importing it here, once, keeps one ``yaml`` for the session.

Two markers are set here by folder, module or fixture rather than in each module: ``bench`` on
the smoke tests of ``bench/`` (``-m "not bench"`` leaves them out), ``pytest_facing`` on the
tests that depend on pytest's own API and ``markdown_facing`` on those of the body scan, which
the nox sessions (``noxfile.py``) run again on the oldest and the newest pytest and
markdown-it-py.
"""

import pytest
import yaml  # noqa: F401

#: Where the fixtures that several folders share are defined once; the real model server's
#: report hook also shows its log beside a failed test that used it.
pytest_plugins = ["tests.support.pytester_runs", "tests.support.sources", "tests.support.realmodel"]

#: Folders whose every test drives pytest: the plugin, collected skills, scenario items.
PYTEST_FACING_FOLDERS = frozenset({"plugin", "collection", "scenario"})
#: Modules elsewhere that hold the command's answers to pytest's internals (its search for
#: the configuration file, ``locate_config``, whose shape changes between releases).
PYTEST_FACING_MODULES = frozenset({"test_cli_locate.py"})
#: Folders whose tests read skill bodies through markdown-it-py: the body scan, the checks.
MARKDOWN_FACING_FOLDERS = frozenset({"skill", "rules"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by these markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.parent.name
        if folder == "bench":
            item.add_marker(pytest.mark.bench)
        facing = folder in PYTEST_FACING_FOLDERS or item.path.name in PYTEST_FACING_MODULES
        if facing or "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.pytest_facing)
        if folder in MARKDOWN_FACING_FOLDERS:
            item.add_marker(pytest.mark.markdown_facing)
