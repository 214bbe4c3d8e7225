"""report.html of 2 evals x 3 configurations x 10 runs: how long it takes to write, how big it is,
and how long Chromium takes to show it, each beside a floor measured in the same run.

    python bench/evals_report.py [--rounds 7]

- write: ``write_report`` on the folder (median) against reading the same folder's files
  (every JSON file parsed, every output file read): what any report of it cannot go below;
- size: the page's bytes, and its share of the folder's bytes;
- load: Chromium loading the page from file:// (navigation start to load event, median)
  against a page of the same bytes as one plain ``<pre>``: the cost of the page's structure;
- open all: the "Open all runs" button, until the 60 runs are laid out.

The folder is the report tests' hand-written one (bench/support/evals_report.py), seeded.
Chromium (Debian's chromium + chromedriver, via Selenium) is skipped with a message when absent.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.evals_report import random_case, write_benchmark
from pytest_agent_skills.evals.report.write import write_report

CONFIGURATIONS = ("with_skill", "without_skill", "baseline")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,1700",
)  # fmt: skip


def read_everything(out_dir: Path) -> int:
    """The floor of writing a report: parse every JSON file, read every other file."""
    total = 0
    for path in sorted(out_dir.rglob("*")):
        if path.is_file() and path.name != "report.html":
            data = path.read_bytes()
            total += len(json.loads(data)) if path.suffix == ".json" else len(data)
    return total


def median_ms(action: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def browser_figures(page: Path, plain: Path, rounds: int) -> tuple[float, float, float] | None:
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.common.by import By
    except ImportError:
        print("load: skipped, selenium is not installed (pip install -e '.[test]')")
        return None
    if not chromium or not chromedriver:
        print("load: skipped, Debian's chromium and chromium-driver are not installed")
        return None
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(chromedriver), options=options)
    script = (
        "const t = performance.getEntriesByType('navigation')[0];"
        "return t.loadEventEnd - t.startTime"
    )
    try:
        loads: dict[Path, list[float]] = {page: [], plain: []}
        opens = []
        for _ in range(rounds):
            for target in (page, plain):  # interleaved: a busy moment hits both
                driver.get(target.as_uri())
                loads[target].append(float(driver.execute_script(script)))
            driver.get(page.as_uri())
            started = time.perf_counter()
            driver.find_element(By.ID, "open-all").click()
            driver.execute_script("return document.body.getBoundingClientRect().height")
            opens.append((time.perf_counter() - started) * 1000)
        return (
            statistics.median(loads[page]),
            statistics.median(loads[plain]),
            statistics.median(opens),
        )
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="bench-report-") as temporary:
        out_dir = Path(temporary) / "evals-out"
        out_dir.mkdir()
        write_benchmark(out_dir, [random_case(i, CONFIGURATIONS, 10, seed=i) for i in (1, 2)])
        floor = median_ms(lambda: read_everything(out_dir), rounds)
        written = median_ms(lambda: write_report(out_dir), rounds)
        print(f"write: {written:.1f} ms, reading the folder {floor:.1f} ms: {written / floor:.1f}x")
        page = out_dir / "report.html"
        folder_bytes = (
            sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file()) - page.stat().st_size
        )
        size = page.stat().st_size
        share = f"{size / folder_bytes:.2f}x the folder's {folder_bytes / 1024:.0f} KiB"
        print(f"size: {size / 1024:.0f} KiB, {share}")
        plain = Path(temporary) / "plain.html"
        text = html.escape(page.read_text(encoding="utf-8"))[:size]
        plain.write_text(f"<!DOCTYPE html><meta charset=utf-8><pre>{text}</pre>", encoding="utf-8")
        figures = browser_figures(page, plain, rounds)
        if figures:
            load, plain_load, opened = figures
            print(f"load: {load:.0f} ms, a plain page of the same size {plain_load:.0f} ms: "
                  f"{load / plain_load:.1f}x")  # fmt: skip
            print(f"open all 60 runs: {opened:.0f} ms")


if __name__ == "__main__":
    main()
