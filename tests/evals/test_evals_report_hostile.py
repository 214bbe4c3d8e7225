"""A real eval run whose eval names, model text and grader evidence are markup meant to break
the page, rendered by report.html in headless Chromium: all of it shows as text, no script
runs, no element is injected, no link leads to ``javascript:``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_agent_skills.evals.suite.output_folder import write_benchmark
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from tests.support.browser import browser, open_report, requests_of  # noqa: F401
from tests.support.evals import CommandAgent, command_agent, recording
from tests.support.skill_files import write_skill

HOSTILE = (
    "</script><script>window.__pwned = 1</script>"
    '<img src=x onerror="window.__pwned = 2">'
    '<a href="javascript:window.__pwned = 3" id="evil">click me</a>'
    " [markdown](javascript:window.__pwned=4) "
    '<iframe src="javascript:window.__pwned = 5"></iframe>'
    '<b onmouseover="window.__pwned = 6">b</b>'
)


def test_hostile_eval_names_model_text_and_evidence_render_as_text(
    browser: Any, tmp_path: Path  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By

    evals = {
        "skill_name": "hostile",
        "evals": [
            {
                "id": 1,
                "name": f"name {HOSTILE}",
                "prompt": f"prompt {HOSTILE}",
                "expectations": [f"expectation {HOSTILE}"],
            }
        ],
    }
    files = {"evals/evals.json": json.dumps(evals)}
    skill = write_skill(tmp_path / "skills", "hostile", files=files)
    agent = CommandAgent(
        "hostile",
        f"printf '%s' {json.dumps('result ' + HOSTILE)}",
        final=f"final {HOSTILE}",
        evidence=f"evidence {HOSTILE}",
        passed=False,
    )
    with command_agent(agent) as url:
        outcome = run_benchmark(EvalRequest(skill, recording(url, tmp_path, runs=1)))
    out_dir = tmp_path / "evals-out"
    write_benchmark(out_dir, outcome.document, outcome.runs)
    open_report(browser, out_dir)
    browser.find_element(By.ID, "open-all").click()
    page = " ".join(browser.find_element(By.TAG_NAME, "body").text.split())
    for label in ("name", "prompt", "final", "evidence", "expectation"):
        assert f"{label} {HOSTILE}" in page, label
    # The tool result is shown as its JSON (quotes escaped), the markup still as text.
    assert "result </script><script>window.__pwned = 1</script><img src=x onerror=" in page
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.execute_script("return document.scripts.length") == 1  # the page's own
    assert browser.find_elements(By.CSS_SELECTOR, "img, iframe, main b, #evil") == []
    scripted = '[href^="javascript:"], [src^="javascript:"]'
    assert browser.find_elements(By.CSS_SELECTOR, scripted) == []
    handlers = browser.execute_script(
        "return [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
        ".map(a => a.name).filter(n => n.startsWith('on'))"
    )
    assert handlers == []
    hrefs = browser.execute_script(
        "return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))"
    )
    assert hrefs and all(href.startswith("#") for href in hrefs), hrefs
    for link in browser.find_elements(By.CSS_SELECTOR, "a[href]")[:20]:
        browser.execute_script("arguments[0].click()", link)
    assert browser.execute_script("return window.__pwned === undefined")
    assert requests_of(browser) == []
