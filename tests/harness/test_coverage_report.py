"""The skill coverage report: loaded skills, selected docs, scripts run and declared tools
called, in the terminal (--skills-coverage) and as JSON (--skills-coverage-json), also
under pytest-xdist."""

from __future__ import annotations

import pytest

from tests.support.cli import named_document
from tests.support.pytester_runs import run_scenarios

NOTES = """\
skills: [skills]
user: Notes please.
model:
  script:
    - {call: skill_load, args: {skill_name: notes, docs: [docs/style.md]}}
    - {call: skill_run, args: {skill: notes, command: "bash scripts/count.sh SKILL.md"}}
    - {say: done}
"""
WEATHER = """\
skills: [skills]
dynamic_tools: true
tools:
  get_current_weather: {returns: {t: 21}}
  get_weather_forecast: {returns: {}}
user: Weather?
model:
  script:
    - {call: skill_load, args: {skill_name: weather-tools, include_all_docs: true}}
    - {call: get_current_weather, args: {city: Paris}}
    - {call: skill_run, args: {skill: weather-tools, command: "python3 scripts/report.py x; false"}}
    - {say: done}
"""
EXPECTED = {
    "skills": [
        {
            "name": "notes",
            "path": "<root>/skills/notes",
            "loaded": True,
            "docs": ["docs/glossary.md", "docs/style.md"],
            "docs_selected": ["docs/style.md"],
            "scripts": ["scripts/count.sh"],
            "scripts_ran": ["scripts/count.sh"],
            "tools": [],
            "tools_called": [],
            "scenarios": 2,
            "scenarios_loaded": 1,
        },
        {
            "name": "weather-tools",
            "path": "<root>/skills/weather-tools",
            "loaded": True,
            "docs": ["docs/API.md"],
            "docs_selected": ["docs/API.md"],
            "scripts": ["scripts/report.py"],
            "scripts_ran": ["scripts/report.py"],
            "tools": ["get_current_weather", "get_weather_forecast"],
            "tools_called": ["get_current_weather"],
            "scenarios": 2,
            "scenarios_loaded": 1,
        },
    ]
}


@pytest.fixture
def project(suite: pytest.Pytester) -> pytest.Pytester:
    """The fixture skills and two scenarios, each offering both skills."""
    (suite.path / "notes.scenario.yaml").write_text(NOTES)
    (suite.path / "weather.scenario.yaml").write_text(WEATHER)
    return suite


def test_the_report_is_printed_with_skills_coverage(project) -> None:
    result = run_scenarios(project, "--skills-coverage")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- skill coverage -*",
            "notes: loaded by 1 of the 2 scenario(s) that offered it",
            "  docs 1/2; never: docs/glossary.md",
            "  scripts 1/1",
            "weather-tools: loaded by 1 of the 2 scenario(s) that offered it",
            "  docs 1/1",
            "  scripts 1/1",
            "  tools 1/2; never: get_weather_forecast",
        ]
    )


def test_a_skill_never_loaded_is_reported(project) -> None:
    (project.path / "weather.scenario.yaml").unlink()
    result = run_scenarios(project, "--skills-coverage")
    result.stdout.fnmatch_lines(
        [
            "weather-tools: NOT loaded by any of the 1 scenario(s) that offered it",
            "  docs 0/1; never: docs/API.md",
            "  scripts 0/1; never: scripts/report.py",
            "  tools 0/2; never: get_current_weather, get_weather_forecast",
        ]
    )


def test_no_report_without_the_flag(project) -> None:
    result = run_scenarios(project)
    result.assert_outcomes(passed=2)
    assert "skill coverage" not in result.stdout.str()


def report(pytester: pytest.Pytester, *args: str) -> tuple[dict, pytest.RunResult]:
    result = run_scenarios(pytester, "--skills-coverage-json", "out/coverage.json", *args)
    result.assert_outcomes(passed=2)
    text = (pytester.path / "out" / "coverage.json").read_text()
    for root in (str(pytester.path.resolve()), str(pytester.path)):
        text = text.replace(root, "<root>")
    return named_document(text, "skill-coverage"), result  # named, and what its schema says


def test_the_report_is_written_as_json(project) -> None:
    assert report(project)[0] == EXPECTED


def test_the_report_and_the_counts_are_complete_under_xdist(project) -> None:
    written, result = report(project, "-n", "2", "--skills-coverage")
    assert written == EXPECTED
    result.stdout.fnmatch_lines(
        ["scenarios run: 2", "notes: loaded by 1 of the 2 scenario(s) that offered it"]
    )
