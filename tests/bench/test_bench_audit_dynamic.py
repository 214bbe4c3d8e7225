"""bench/audit_dynamic.py runs one detonation per runtime and prints its cost against the bare
start of the same runtime (and, in the sandbox, the same script unwatched)."""

import pytest

from tests.support.bench import NUMBER, assert_lines, check_runtime_listed, run_bench

N = NUMBER


@pytest.mark.parametrize(
    ("runtime", "floors"),
    [
        pytest.param(
            "sandbox",
            [r"bwrap \.\.\. true: the sandbox's start", r"bwrap \.\.\. python3 scripts/hello\.py"],
            marks=pytest.mark.sandbox,
        ),
        pytest.param("docker", [r"docker run --network none IMAGE true"], marks=pytest.mark.docker),
    ],
)
def test_one_run_prints_the_cost_per_script_against_the_floor(
    runtime: str, floors: list[str]
) -> None:
    output = run_bench("audit_dynamic.py", "--runs", "1", "--runtimes", runtime, timeout=600)
    check_runtime_listed(output, runtime)
    assert_lines(
        output,
        rf"^\(load average {N}, {N}, {N}\)$",
        r"^dynamic run cost per script \(median of 1 runs, interleaved\):$",
        *(
            rf"^  \S*\s+detonate\s+{N} ms \| floor\s+{N} ms \({floor}.*\) \| ratio\s+{N}x$"
            for floor in floors
        ),
    )
