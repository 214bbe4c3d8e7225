"""bench/url_cache.py runs on a small archive and prints its timings and ratios."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER


def test_prints_the_first_fetch_the_cached_use_and_their_ratios() -> None:
    output = run_bench("url_cache.py", "--size-mb", "0.1", "--rounds", "1", timeout=120)
    assert_lines(
        output,
        rf"^archive: {N} MiB zip from a loopback server$",
        rf"^bare download \(httpx, floor\):\s+{N} ms$",
        rf"^first fetch \(download\+unpack\):\s+{N} ms$",
        rf"^cached use:\s+{N} ms \(0 requests\)$",
        rf"^ratio cached / first fetch:\s+{N}%\s+\(goal < 5%\)$",
        rf"^ratio first fetch / download:\s+{N}x$",
    )
