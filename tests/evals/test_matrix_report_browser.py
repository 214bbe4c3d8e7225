"""The trigger matrix of a 50-skill repository and the description candidates in report.html,
in a real headless Chromium: every cell drawn where its counts say, the worst collisions
listed, nothing requested.

``PYTEST_AGENT_SKILLS_UPDATE_SCREENSHOT=1`` also writes the matrix's screenshot to
docs/triggers-matrix.png.
"""

# ruff: noqa: F811 - the browser fixture imported from tests.support.browser is used as arguments
from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.support.routing import many_skills, planned_counts
from pytest_agent_skills.evals.documents.document_io import write_document
from pytest_agent_skills.evals.triggers.matrix import MatrixBars, matrix_document
from tests.support.browser import browser, open_report  # noqa: F401
from tests.support.evals import replaying

with contextlib.suppress(ImportError):  # the test extra is absent: the browser fixture skips
    from selenium.webdriver.common.by import By

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "triggers-matrix.png"


@pytest.fixture
def fifty(tmp_path: Path) -> Path:
    skills = many_skills(50)
    document = matrix_document(
        sorted(skills), planned_counts(skills, 3), replaying(tmp_path, runs=3), MatrixBars()
    )
    out_dir = tmp_path / "triggers-out"
    write_document(out_dir / "triggers-matrix.json", document)
    return out_dir


def test_a_fifty_skill_matrix_draws_every_count_and_the_worst_collisions(
    browser: Any, fifty: Path, tmp_path: Path
) -> None:
    document = json.loads((fifty / "triggers-matrix.json").read_text())
    open_report(browser, fifty)
    svg = browser.find_element(By.CSS_SELECTOR, "#matrix svg.confusion")
    width, height = svg.size["width"], svg.size["height"]
    assert width <= 1200 and height <= 1000  # read without zooming out
    cells = browser.find_elements(By.CSS_SELECTOR, "svg.confusion rect.cell")
    assert len(cells) == 50 * 51
    drawn = {
        (cell.get_attribute("data-owner"), cell.get_attribute("data-loaded")): int(
            cell.get_attribute("data-count")
        )
        for cell in cells
        if cell.get_attribute("data-count") != "0"
    }
    expected: dict[tuple[str, str], int] = {}
    for query in document["queries"]:
        if query["should_trigger"]:
            for loaded, count in query["loaded"].items():
                key = (query["owner"], loaded)
                expected[key] = expected.get(key, 0) + count
    assert drawn == expected
    # Every cell is inside the picture, and the darkest of a row is its largest count.
    for cell in cells[:51]:
        assert 0 <= cell.location["x"] - svg.location["x"] <= width
    listed = [
        " ".join(item.text.split())
        for item in browser.find_elements(By.CSS_SELECTOR, "#matrix li.collision")
    ]
    worst = document["collisions"][0]
    assert listed[0].startswith(f"{worst['a']} ⇄ {worst['b']}: {worst['count']} runs")
    assert len(listed) == min(10, len(document["collisions"]))
    below = browser.find_elements(By.CSS_SELECTOR, "tr.skill-score.is-fail")
    assert len(below) == len(document["summary"]["below_bar"])
    # A skill's own should-not queries that loaded it are its own false triggers, never
    # false triggers "to" itself.
    for row in browser.find_elements(By.CSS_SELECTOR, "tr.skill-score"):
        name = row.find_element(By.CSS_SELECTOR, "th").text
        shown = row.find_element(By.CSS_SELECTOR, "td.false-triggers").text
        score = document["per_skill"][name]
        assert name not in [part.rpartition(" ")[0] for part in shown.split(", ")]
        own = score["own_false_triggers"]
        assert (f"its own should-not queries {own}" in shown) is (own > 0), (name, shown)
    picture = tmp_path / "triggers-matrix.png"
    browser.execute_script("document.getElementById('matrix').scrollIntoView()")
    assert browser.save_screenshot(str(picture))
    assert picture.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    if os.environ.get("PYTEST_AGENT_SKILLS_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(picture, SCREENSHOT)
