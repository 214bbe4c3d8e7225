"""The HTML mutation report in a real headless Chromium: it loads alone (no request beyond
itself, its style allowed by the page's policy), shows the score, each survivor's diff and
hint, and every mutant's status in the eval report's badges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from pytest_agent_skills.cli import main
from tests.support.browser import browser, requests_of
from tests.support.mutation import SKILL, mutation_project

__all__ = ["browser"]  # the fixture, imported for the tests of this module

pytestmark = pytest.mark.usefixtures("clean_settings_env")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = mutation_project(tmp_path_factory.mktemp("project"), "weak")
    out = project.parent / "mutation.html"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        status = main(["mutate", SKILL, "--max-mutants", "6", "--format", "html", "-o", str(out)])
    assert status == 0
    return out


def test_the_page_loads_alone_and_shows_score_survivors_and_badges(
    browser: Any, page: Path
) -> None:
    url = page.as_uri()
    browser.get("about:blank")
    requests_of(browser)
    browser.get(url)
    assert requests_of(browser) == [url]
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
    assert browser.find_element(By.TAG_NAME, "h1").text == f"{SKILL}: mutation report"
    assert browser.find_element(By.CSS_SELECTOR, ".card .big").text == "0.00"
    survivors = browser.find_elements(By.CSS_SELECTOR, "#survivors article")
    assert len(survivors) == 6
    first = survivors[0]
    assert first.find_element(By.TAG_NAME, "h3").text == "M01 broadened-description SKILL.md:3"
    assert first.find_element(By.CSS_SELECTOR, "pre.diff").text.startswith(
        "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1,5 +1,5 @@"
    )
    assert "should-not-trigger queries" in first.find_element(By.TAG_NAME, "p").text
    badges = browser.find_elements(By.CSS_SELECTOR, "#mutants tbody .badge")
    assert [badge.text for badge in badges] == ["survived"] * 6
    # The eval report's style sheet applies: a survivor's badge is its failing red.
    colour = badges[0].value_of_css_property("background-color")
    assert colour in ("rgba(207, 34, 46, 1)", "rgb(207, 34, 46)")
