"""pytest run inside pytest (``pytester``): the quiet options, the run, a project holding the
fixture skills, and an environment without the plugin's settings.

``tests/conftest.py`` loads this module as a plugin: its fixtures are there for every test
module without an import."""

from __future__ import annotations

import shutil

import pytest

from pytest_agent_skills import settings
from tests.support.harness import SKILLS

#: Inline runs re-import every plugin; hypothesis alone costs about a second each time, and its
#: summary hook would re-import it on every run.
QUIET_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark")
#: Scenario items only: the SKILL.md files of the project are not validated as items.
SCENARIOS_ONLY = (*QUIET_PLUGINS, "-o", "skills_validate=false")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``pytester.runpytest`` with the quiet options first."""
    return pytester.runpytest(*QUIET_PLUGINS, *args)


def run_scenarios(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``pytester.runpytest`` of the scenario items only, with the quiet options first."""
    return pytester.runpytest(*SCENARIOS_ONLY, *args)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project holding the harness's fixture skills under ``skills/``."""
    shutil.copytree(SKILLS, pytester.path / "skills")
    return pytester


@pytest.fixture
def clean_settings_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No environment twin of a setting leaks from the caller into the test's runs; a module
    asks for it with ``pytestmark = pytest.mark.usefixtures("clean_settings_env")``."""
    for setting in settings.load_all():
        monkeypatch.delenv(setting.env_name, raising=False)
