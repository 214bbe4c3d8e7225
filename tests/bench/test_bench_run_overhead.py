"""bench/run_overhead.py runs one call per figure under each runtime and prints the run
overhead, the first call, staging and the 100 MB skill against their floors; as root the local
row comes again as a normal user."""

import os

import pytest

from tests.support.bench import NUMBER, assert_lines, check_runtime_listed, run_bench

N = NUMBER


@pytest.mark.parametrize(
    "runtime",
    [
        pytest.param("local"),
        pytest.param("sandbox", marks=pytest.mark.sandbox),
        pytest.param("docker", marks=pytest.mark.docker),
    ],
)
def test_one_call_prints_every_figure_of_the_runtime(runtime: str) -> None:
    output = run_bench("run_overhead.py", "--runs", "1", "--runtimes", runtime, timeout=600)
    check_runtime_listed(output, runtime)
    assert_lines(
        output,
        rf"^\(load average {N}, {N}, {N}\)$",
        r"^run overhead \(median of 1 calls, goal <= 1\.3x the floor\):$",
        rf"^  {runtime}\s+run\('true'\)\s+{N} ms \| floor\s+{N} ms \(.+\) \| ratio\s+{N}x$",
        rf"^first call in a fresh workspace, {N} MB skill \(median of 5\):$",
        rf"^  {runtime}\s+first run\s+{N} ms .*\| later run\s+{N} ms \| first call adds\s+-?{N} ms",
        r"^staging alone \(copy: the local runtime; link: sandbox and docker\):$",
        rf"^  1 MB\s+copy stage_skill\s+{N} ms \| floor\s+{N} ms \(cp -r of the same tree\)",
        rf"^  100 MB\s+link stage_skill\s+{N} ms",
        r"^100 MB skill, first call per runtime ",
    )
    if runtime == "local" and os.geteuid() == 0:
        assert "as a normal user failed" not in output, output
        assert output.count("run overhead (median of 1 calls") == 2, output
