"""A real headless Chromium (Debian's ``chromium`` and ``chromedriver``, driven by Selenium)
for the report's tests: the ``browser`` fixture (import it into the test module) and
:func:`open_report`, which loads an output folder's report.html and checks that the page
asks for nothing else."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.evals.report.write import write_report
from tests.support.services import missing_service

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1700",
)

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
except ImportError:  # the test extra is not installed
    webdriver = None  # type: ignore[assignment]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if webdriver is None:
        missing_service("selenium is not installed (pip install -e '.[test]')")
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not chromedriver:
        missing_service(
            "Debian's chromium and chromium-driver are not installed "
            "(scripts/setup-services.sh installs them as root)"
        )
    profile = tempfile.mkdtemp(prefix="report-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    # Every request the page makes shows up in the DevTools network events of this log.
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(chromedriver), options=options)
    except WebDriverException as error:
        shutil.rmtree(profile, ignore_errors=True)
        missing_service(f"chromium does not start under chromedriver: {error.msg}")
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def requests_of(driver: Any) -> list[str]:
    """URLs requested since the last call (DevTools Network.requestWillBeSent events)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def open_report(driver: Any, out_dir: Path) -> str:
    """Load out_dir's report from file://, checking that it asks for nothing else; its URL."""
    url = write_report(out_dir).as_uri()
    driver.get("about:blank")
    requests_of(driver)  # drop what came before
    driver.get(url)
    assert driver.execute_script("return document.readyState") == "complete"
    assert requests_of(driver) == [url]
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    return url
