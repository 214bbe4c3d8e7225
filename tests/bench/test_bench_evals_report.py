"""bench/evals_report.py runs one round and prints the report's write time, size and, in
Chromium, its load and "Open all runs" times against their floors."""

import re

from tests.support.bench import NUMBER, assert_lines, run_bench
from tests.support.services import missing_service

N = NUMBER


def test_one_round_prints_the_write_size_and_browser_figures() -> None:
    output = run_bench("evals_report.py", "--rounds", "1", timeout=300)
    assert_lines(
        output,
        rf"^load average {N}; 1 rounds$",
        rf"^write: {N} ms, reading the folder {N} ms: {N}x$",
        rf"^size: {N} KiB, {N}x the folder's {N} KiB$",
    )
    skipped = re.search(r"^load: skipped, (.*)$", output, re.M)
    if skipped:
        missing_service(f"the report's browser figures: {skipped[1]}")
    assert_lines(
        output,
        rf"^load: {N} ms, a plain page of the same size {N} ms: {N}x$",
        rf"^open all 60 runs: {N} ms$",
    )
