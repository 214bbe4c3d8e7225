"""report.html in a real headless Chromium (Debian's ``chromium`` and ``chromedriver``, driven by
Selenium): what a person sees, what a click opens, and that no request leaves the page.

``PYTEST_AGENT_SKILLS_UPDATE_SCREENSHOT=1`` also writes the page's screenshot to
docs/evals-report.png.
"""

# ruff: noqa: F811 - the browser fixture imported from tests.support.browser is used as arguments
from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bench.support.evals_report import (
    MEAN_EVAL,
    SUMMARY_EVAL,
    hostile_case,
    random_case,
    write_benchmark,
    write_triggers,
)
from tests.support.browser import browser, open_report, requests_of  # noqa: F401
from tests.support.workspace import get_runtime

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "evals-report.png"
EXAMPLE_SUITE = REPO / "example_suite"  # its invoice-totals evals replay from shipped cassettes
try:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webelement import WebElement
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # the test extra is not installed: the browser fixture skips
    pass


def shown(element: WebElement) -> str:
    return " ".join(str(element.text).split())


@pytest.fixture
def two_evals(tmp_path: Path) -> Path:
    out_dir = tmp_path / "evals-out"
    out_dir.mkdir()
    write_benchmark(out_dir, [MEAN_EVAL, SUMMARY_EVAL])
    write_triggers(out_dir)
    return out_dir


def test_pass_rates_and_their_spread_are_shown(browser: Any, two_evals: Path) -> None:
    open_report(browser, two_evals)
    card = browser.find_element(By.ID, "summary-with_skill")
    assert shown(card.find_element(By.CLASS_NAME, "big")) == "94%"
    assert shown(card.find_element(By.CLASS_NAME, "sd")) == "± 14"
    without = shown(browser.find_element(By.ID, "summary-without_skill"))
    assert without.startswith("without_skill 39% ± 38 min-max 0–100% over 6 runs")
    assert without.endswith("1 errored run (counted as failed)")
    delta = browser.find_element(By.CSS_SELECTOR, ".card.delta")
    assert shown(delta).startswith("with_skill − without_skill +0.56 pass rate")
    rows = [shown(row) for row in browser.find_elements(By.CSS_SELECTOR, "#eval-table tbody tr")]
    assert rows == [
        "1. mean of a column with_skill 89% ± 19 67–100% 2/3 0 15.0 s 1,100 — runs",
        "without_skill 11% ± 19 0–33% 0/3 1 11.0 s 1,100 +0.78 runs",
        "2. summary file with_skill 100% ± 0 100–100% 3/3 0 15.0 s 1,100 — runs",
        "without_skill 67% ± 29 50–100% 1/3 0 11.0 s 1,100 +0.33 runs",
    ]


def test_the_chart_draws_each_configuration_where_its_mean_is(
    browser: Any, two_evals: Path
) -> None:
    open_report(browser, two_evals)
    chart = browser.find_element(By.ID, "pass-rate-chart")
    assert chart.is_displayed() and chart.size["width"] >= 800
    rows = chart.find_elements(By.CSS_SELECTOR, "g.chart-row")
    assert len(rows) == 3 * 2  # all evals, eval 1, eval 2; two configurations each
    dots = [row.find_element(By.CSS_SELECTOR, "circle.mean") for row in rows]
    x = [dot.rect["x"] + dot.rect["width"] / 2 for dot in dots]
    zero, hundred = (
        tick.rect["x"] + tick.rect["width"] / 2
        for tick in chart.find_elements(By.CSS_SELECTOR, "line.grid")[::4]
    )
    means = [0.9444, 0.3889, 0.8889, 0.1111, 1.0, 0.6667]
    for position, mean in zip(x, means, strict=True):
        assert position == pytest.approx(zero + mean * (hundred - zero), abs=2)
    colours = {dot.value_of_css_property("fill") for dot in dots}
    assert len(colours) == 2  # one per configuration
    assert "11% ± 19 (0–33%, n=3, 1 error)" in shown(chart)


def test_a_click_opens_a_transcript_with_its_tool_calls(browser: Any, two_evals: Path) -> None:
    open_report(browser, two_evals)
    run = browser.find_element(By.ID, "run-1-with_skill-1")
    call = run.find_elements(By.CSS_SELECTOR, ".tool-call")[1]
    assert not call.is_displayed()
    run.find_element(By.TAG_NAME, "summary").click()
    assert call.is_displayed()
    text = shown(call)
    assert text.startswith('tool call skill_run ARGUMENTS { "skill": "csv-stats", "command": ')
    assert '"exit_code": 0' in text
    final = run.find_element(By.CSS_SELECTOR, ".message.final")
    assert (
        shown(final)
        == "FINAL ANSWER The mean of the value column is 4.2 (computed by scripts/stats.py)."
    )
    outputs = [shown(item) for item in run.find_elements(By.CSS_SELECTOR, "li.output")]
    assert outputs == ["plots/histogram.png 272 bytes, binary", "stats.json 57 bytes text"]


def test_the_keyboard_opens_runs_and_the_buttons(browser: Any, two_evals: Path) -> None:
    open_report(browser, two_evals)
    run = browser.find_element(By.ID, "run-2-without_skill-2")
    summary = run.find_element(By.TAG_NAME, "summary")
    browser.execute_script("arguments[0].focus()", summary)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert run.get_attribute("open") is not None
    button = browser.find_element(By.ID, "open-all")
    browser.execute_script("arguments[0].focus()", button)
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    runs = browser.find_elements(By.CSS_SELECTOR, "details.run")
    assert len(runs) == 12 and all(item.get_attribute("open") is not None for item in runs)
    browser.find_element(By.ID, "only-failing").click()
    visible = [item.get_attribute("id") for item in runs if item.is_displayed()]
    assert visible == [
        "run-1-with_skill-3",
        "run-1-without_skill-1",
        "run-1-without_skill-2",
        "run-1-without_skill-3",
        "run-2-without_skill-2",
        "run-2-without_skill-3",
    ]


def test_failing_expectations_show_their_evidence(browser: Any, two_evals: Path) -> None:
    open_report(browser, two_evals)
    first = browser.find_element(By.CSS_SELECTOR, "#failing .failing-expectation")
    assert first.is_displayed()
    assert shown(first) == (
        "✘ out/stats.json exists failed in 1/3 with_skill, 2/2 without_skill "
        "skill_run printed mean 4.2 but the final answer gives 4.0. with_skill #3 "
        "The answer says 'about 5' but the data's mean is 4.2; no script was run. "
        "without_skill #1 #2"
    )
    # The evidence's link opens the run it came from, scrolled into view.
    first.find_element(By.LINK_TEXT, "#3").click()
    run = browser.find_element(By.ID, "run-1-with_skill-3")
    # The page opens it on the "hashchange" event, which the browser fires after the click.
    WebDriverWait(browser, 10).until(lambda _driver: run.get_attribute("open") is not None)
    assert run.get_attribute("open") is not None
    failed = run.find_element(By.CSS_SELECTOR, ".expectation.failed")
    assert failed.is_displayed()
    assert shown(failed) == (
        "✘ out/stats.json exists skill_run printed mean 4.2 but the final answer gives 4.0."
    )


def test_an_errored_run_is_shown_as_an_error(browser: Any, two_evals: Path) -> None:
    open_report(browser, two_evals)
    chip = browser.find_element(By.CSS_SELECTOR, "#runs-1-without_skill .chip:nth-of-type(3)")
    assert chip.get_attribute("class") == "chip error"
    assert chip.value_of_css_property("background-color") == "rgba(154, 103, 0, 1)"
    errors = [shown(row) for row in browser.find_elements(By.CSS_SELECTOR, "table.errors tbody tr")]
    assert errors == [
        "1. mean of a column without_skill #3 model upstream answered 503 three times"
    ]
    badge = browser.find_element(By.CSS_SELECTOR, "#run-1-without_skill-3 summary .badge")
    assert shown(badge) == "error: model"


def test_trigger_results_are_shown(browser: Any, two_evals: Path) -> None:
    open_report(browser, two_evals)
    assert shown(browser.find_element(By.ID, "triggers-summary")) == "2 of 5 queries pass"
    rows = browser.find_elements(By.CSS_SELECTOR, "table.triggers tbody tr")
    assert [shown(row) for row in rows] == [
        "what's the average of the price column in sales.csv yes 3/3 0 100% pass",
        "compute summary statistics for measurements.csv yes 1/3 0 33% fail",
        "write a haiku about spreadsheets no 0/3 0 0% pass",
        "convert this csv to json no 2/3 0 67% fail",
        "total the invoices in q3.csv upstream answered 429 four times yes 2/3 1 67% fail",
    ]
    errors = rows[-1].find_element(By.CSS_SELECTOR, "td.has-errors")
    assert errors.value_of_css_property("color") == "rgba(154, 103, 0, 1)"


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_injected_markup_is_text_and_nothing_reaches_the_network(
    browser: Any, tmp_path: Path
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CountingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        hostile = (
            f'</script><script>window.__pwned = 1</script><img src="{origin}/img">'
            f'<link rel="stylesheet" href="{origin}/css"><style>@import "{origin}/import";</style>'
            f'</pre><iframe src="{origin}/frame"></iframe>'
        )
        out_dir = tmp_path / "evals-out"
        out_dir.mkdir()
        write_benchmark(out_dir, [hostile_case(hostile)], skill_name=f"skill {hostile}")
        open_report(browser, out_dir)
        browser.find_element(By.ID, "open-all").click()
        run = browser.find_element(By.ID, "run-1-with_skill-1")
        run.find_element(By.CSS_SELECTOR, "li.output summary").click()
        time.sleep(0.3)
        text = run.text
        for label in ("final", "result", "file", "expectation"):
            assert f"{label} {hostile}" in text, label
        assert hostile in browser.find_element(By.TAG_NAME, "h1").text
        assert browser.execute_script("return window.__pwned === undefined")
        assert browser.find_elements(By.CSS_SELECTOR, "img, iframe, link, main style") == []
        assert requests_of(browser) == []
        assert _CountingHandler.hits == []
    finally:
        server.shutdown()
        server.server_close()


def test_sixty_runs_load_and_open(browser: Any, tmp_path: Path) -> None:
    out_dir = tmp_path / "evals-out"
    out_dir.mkdir()
    configurations = ("with_skill", "without_skill", "baseline")
    write_benchmark(out_dir, [random_case(i, configurations, 10, seed=i) for i in (1, 2)])
    open_report(browser, out_dir)
    loaded = browser.execute_script(
        "const t = performance.getEntriesByType('navigation')[0];"
        "return t.loadEventEnd - t.startTime"
    )
    print(f"2 evals x 3 configurations x 10 runs: loaded in {loaded:.0f} ms")
    started = time.perf_counter()
    browser.find_element(By.ID, "open-all").click()
    runs = browser.find_elements(By.CSS_SELECTOR, "details.run[open]")
    print(f"opened {len(runs)} runs in {(time.perf_counter() - started) * 1000:.0f} ms")
    assert len(runs) == 60
    assert len(browser.find_elements(By.CSS_SELECTOR, "#pass-rate-chart g.chart-row")) == 9


def test_a_folder_the_eval_runner_wrote(browser: Any, tmp_path: Path) -> None:
    get_runtime("sandbox", tmp_path / "probe")  # the recorded commands replay in the sandbox
    out_dir = tmp_path / "evals-out"
    for triggers_too in ((), ("--triggers",)):
        done = subprocess.run(
            [sys.executable, "-m", "pytest_agent_skills.cli", "eval", "--runtime", "sandbox",
             ".claude/skills/invoice-totals", *triggers_too, "--out", str(out_dir)],
            cwd=EXAMPLE_SUITE, env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    benchmark = json.loads((out_dir / "benchmark.json").read_text())
    triggers = json.loads((out_dir / "triggers.json").read_text())
    assert benchmark["metadata"]["runtime"] == triggers["runtime"] == "sandbox"
    open_report(browser, out_dir)

    summary = dict(benchmark["run_summary"])
    delta = summary.pop("delta")
    for name, figures in summary.items():
        card = browser.find_element(By.ID, f"summary-{name}")
        assert shown(card.find_element(By.CLASS_NAME, "big")) == (
            f"{figures['pass_rate']['mean'] * 100:.0f}%"
        )
    delta_card = browser.find_element(By.CSS_SELECTOR, ".card.delta .big")
    assert shown(delta_card) == delta["pass_rate"]

    run = benchmark["runs"][0]
    transcript = json.loads((out_dir / run["run_dir"] / "transcript.json").read_text())
    anchor = f"run-{run['eval_id']}-{run['configuration']}-{run['run_number']}"
    details = browser.find_element(By.ID, anchor)
    details.find_element(By.TAG_NAME, "summary").click()
    names = [shown(name) for name in details.find_elements(By.CSS_SELECTOR, ".call-name code")]
    assert names == [call["name"] for call in transcript["tool_calls"]] and names
    assert all(name.is_displayed() for name in details.find_elements(By.CSS_SELECTOR, ".call-name"))
    final = shown(details.find_element(By.CSS_SELECTOR, ".message.final pre"))
    assert final == " ".join(transcript["final_text"].split())

    failed = [
        (item["text"], item["evidence"])
        for entry in benchmark["runs"]
        for item in entry["expectations"]
        if not item["passed"]
    ]
    assert failed, "the example's baseline is meant to fail some expectations"
    shown_failing = shown(browser.find_element(By.ID, "failing"))
    for text, evidence in failed:
        assert " ".join(text.split()) in shown_failing
        assert " ".join(evidence.split()) in shown_failing

    rows = [shown(row) for row in browser.find_elements(By.CSS_SELECTOR, "table.triggers tbody tr")]
    for row, result in zip(rows, triggers["results"], strict=True):
        should = "yes" if result["should_trigger"] else "no"
        counts = f"{result['triggers']}/{result['runs']} {result['errors']}"
        assert row.startswith(f"{result['query']} {should} {counts} "), row
        assert row.endswith("pass" if result["pass"] else "fail")


def test_screenshot(browser: Any, tmp_path: Path) -> None:
    out_dir = tmp_path / "evals-out"
    out_dir.mkdir()
    write_benchmark(out_dir, [MEAN_EVAL, SUMMARY_EVAL])
    open_report(browser, out_dir)
    picture = tmp_path / "evals-report.png"
    assert browser.save_screenshot(str(picture))
    data = picture.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == tuple(browser.execute_script("return [innerWidth, innerHeight]"))
    if os.environ.get("PYTEST_AGENT_SKILLS_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(picture, SCREENSHOT)


VERDICTS_SCREENSHOT = REPO / "docs" / "evals-verdicts.png"


@pytest.fixture(scope="module")
def noisy_evals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder the eval runner wrote from the seeded grader of ``grader_pass``:
    intervals, verdicts and flaky expectations recorded in benchmark.json."""
    from pytest_agent_skills.evals.suite.output_folder import write_benchmark as write_out
    from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
    from tests.support.evals import (
        NOISY_EVALS,
        Behaviour,
        fake_endpoint,
        recording,
        write_eval_skill,
    )

    root = tmp_path_factory.mktemp("noisy")
    skill = write_eval_skill(root, evals=NOISY_EVALS)
    with fake_endpoint(Behaviour(seed=5, grader_pass=0.6)) as (_endpoint, url):
        outcome = run_benchmark(EvalRequest(skill, recording(url, root, runs=5, jobs=2)))
    out_dir = root / "evals-out"
    write_out(out_dir, outcome.document, outcome.runs)
    return out_dir


def _percent_range(interval: list[float]) -> str:
    return f"{interval[0] * 100:.0f}–{interval[1] * 100:.0f}%"


def _points(interval: list[float]) -> str:
    return f"{interval[0] * 100:+.0f} – {interval[1] * 100:+.0f} points"


def test_intervals_verdicts_and_flaky_expectations_are_shown(
    browser: Any, noisy_evals: Path
) -> None:
    benchmark = json.loads((noisy_evals / "benchmark.json").read_text())
    open_report(browser, noisy_evals)
    for name in ("with_skill", "without_skill"):
        card = shown(browser.find_element(By.ID, f"summary-{name}"))
        summary = benchmark["run_summary"][name]
        assert f"95% interval {_percent_range(summary['pass_rate']['ci95'])}" in card
        assert f"all expectations met: 95% {_percent_range(summary['all_met_ci95'])}" in card
    overall = benchmark["overall"]
    shown_overall = shown(browser.find_element(By.ID, "overall-verdict"))
    assert shown_overall == f"95%: {_points(overall['delta_ci95'])} {overall['verdict']}"

    rows = browser.find_elements(By.CSS_SELECTOR, "#eval-table tbody tr")
    for verdict in benchmark["evals"]:
        mine = [row for row in rows if row.get_attribute("data-eval") == str(verdict["eval_id"])]
        lead, other = (shown(row) for row in mine)
        ci = verdict["pass_rate"]
        assert _percent_range(ci["with_skill"]["ci95"]) in lead
        assert _percent_range(ci["without_skill"]["ci95"]) in other
        badge = mine[1].find_element(By.CSS_SELECTOR, ".verdict")
        assert badge.get_attribute("data-verdict") == verdict["verdict"] == shown(badge)
        assert f"95%: {_points(verdict['delta_ci95'])}" in other
        assert (  # the words of the command and benchmark.md
            f"{verdict['runs_for_0_10']} runs per configuration would bring the interval to"
            " ±0.10 at the spread observed" in other
        )

    # The chart's whiskers end at the interval's bounds.
    chart = browser.find_element(By.ID, "pass-rate-chart")
    zero, hundred = (
        tick.rect["x"] + tick.rect["width"] / 2
        for tick in chart.find_elements(By.CSS_SELECTOR, "line.grid")[::4]
    )
    drawn = chart.find_elements(By.CSS_SELECTOR, "g.chart-row")
    intervals = [
        benchmark["run_summary"][name]["pass_rate"]["ci95"]
        for name in ("with_skill", "without_skill")
    ]
    intervals += [
        verdict["pass_rate"][name]["ci95"]
        for verdict in benchmark["evals"]
        for name in ("with_skill", "without_skill")
    ]
    for row, interval in zip(drawn, intervals, strict=True):
        whisker = row.find_element(By.CSS_SELECTOR, "line.whisker")
        assert whisker.rect["x"] == pytest.approx(zero + interval[0] * (hundred - zero), abs=2)
        right = whisker.rect["x"] + whisker.rect["width"]
        assert right == pytest.approx(zero + interval[1] * (hundred - zero), abs=2)
        assert f"95% {_percent_range(interval)}" in shown(row)

    flaky = [
        (verdict["eval_id"], item) for verdict in benchmark["evals"] for item in verdict["flaky"]
    ]
    assert flaky, "the seeded grader passes 60% of the expectations: some are flaky"
    shown_rows = [
        shown(row) for row in browser.find_elements(By.CSS_SELECTOR, "#flaky tr.flaky-row")
    ]
    titles = {verdict["eval_id"]: verdict["eval_name"] for verdict in benchmark["evals"]}
    assert shown_rows == [
        f"{eval_id}. {titles[eval_id]} {item['configuration']} {item['text']}"
        f" {item['passed']}/{item['runs']} {item['passed'] / item['runs'] * 100:.0f}%"
        for eval_id, item in flaky
    ]
    browser.find_element(By.CSS_SELECTOR, "nav a[href='#flaky']").click()
    picture = noisy_evals / "verdicts.png"
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(picture))
    if os.environ.get("PYTEST_AGENT_SKILLS_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(picture, VERDICTS_SCREENSHOT)


MODELS_SCREENSHOT = REPO / "docs" / "evals-models.png"


def test_the_models_overview_comes_first(browser: Any, tmp_path: Path) -> None:
    from tests.support.evals import Behaviour, fake_endpoint, write_eval_skill

    skill = write_eval_skill(tmp_path)
    behaviour = Behaviour(uses_skill_by_model={"fake-good": 1.0, "fake-weak": 0.2})
    with fake_endpoint(behaviour) as (_endpoint, url):
        done = subprocess.run(
            [sys.executable, "-m", "pytest_agent_skills.cli", "eval", str(skill), "-q",
             "--runtime", "local", "--model", "fake-good", "--model", "fake-weak",
             "--record", "all", "--upstream-url", url, "--runs", "4", "--min-pass-rate", "0",
             "--out", "out"],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out_dir = tmp_path / "out"
    overview = json.loads((out_dir / "models.json").read_text())
    open_report(browser, out_dir)
    first = browser.find_element(By.CSS_SELECTOR, "main > section")
    assert first.get_attribute("id") == "models" and first.is_displayed()
    rows = browser.find_elements(By.CSS_SELECTOR, "#models-table tbody tr.model-row")
    groups = [("All evals", overview["overall"])] + [
        (f"{entry['eval_id']}. {entry['eval_name']}", entry["models"])
        for entry in overview["evals"]
    ]
    expected = []
    for title, figures in groups:
        for model in overview["models"]:
            shown_figures = figures[model]
            low, high = shown_figures["delta_ci95"]
            expected.append(
                (title, model, f"{shown_figures['with_skill'] * 100:.0f}%",
                 f"{shown_figures['delta']} {low * 100:+.0f} – {high * 100:+.0f} points"
                 f" {shown_figures['verdict']}")
            )  # fmt: skip
    found = [
        (
            row.get_attribute("data-group"),
            row.get_attribute("data-model"),
            shown(row.find_element(By.CSS_SELECTOR, "td.rate")),
            " ".join(shown(cell) for cell in row.find_elements(By.CSS_SELECTOR, "td")[3:6]),
        )
        for row in rows
    ]
    assert found == expected
    link = browser.find_element(By.CSS_SELECTOR, "#models-table a[href='fake-weak/report.html']")
    picture = out_dir / "models.png"
    assert browser.save_screenshot(str(picture))
    if os.environ.get("PYTEST_AGENT_SKILLS_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(picture, MODELS_SCREENSHOT)
    link.click()
    WebDriverWait(browser, 10).until(lambda driver: "fake-weak/report.html" in driver.current_url)
    assert shown(browser.find_element(By.TAG_NAME, "h1")) == "csv-stats: eval report"
