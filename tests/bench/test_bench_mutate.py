"""bench/mutate.py runs one round and prints its goal ratio (time per mutant against one plain
run of the same checks), the wall time per mutant at --jobs 1 and 2, and the model requests
stopping early saved."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER


def test_one_round_prints_the_goal_ratio_and_the_requests_saved() -> None:
    output = run_bench("mutate.py", "1", timeout=300)
    assert_lines(
        output,
        rf"^mutation of order-total: 30 mutants, 2 scenario checks \(strong suite\), 1 rounds"
        rf" round robin, load average {N}$",
        r"^goal: time per mutant <= 2x one plain run of the same checks$",
        rf"^  per mutant / plain run  x{N}  (met|not met)  \({N} / {N} ms; minima x{N}\)$",
        rf"^  plain run  {N}ms  {N}ms$",
        rf"^  a surviving mutant  {N}ms  x{N} of the plain run$",
        rf"^  wall per mutant, --jobs 1  {N}ms  x{N} of the plain run$",
        rf"^  wall per mutant, --jobs 2  {N}ms  x{N} of the plain run$",
        rf"^model requests saved by stopping at the first failing check: {N} of {N} \({N}%\)$",
    )
