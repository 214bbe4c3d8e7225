"""bench/xdist.py runs on two skills and prints serial against ``-n 2``, its floor and a
breakdown by process and phase; both runs give the same outcome for every item."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER


def test_two_skills_print_the_ratios_and_the_breakdown() -> None:
    output = run_bench("xdist.py", "--skills", "2", "--runs", "1", timeout=600)
    assert_lines(
        output,
        rf"^2 skills \(2 items\) and a floor of 2 plain tests .*load average {N}",
        *(
            rf"^  {run}\s+{N}\s+{N}\s+{N}$"
            for run in ("skills serial", "skills -n 2", "floor serial", "floor -n 2")
        ),
        rf"^ratio skills -n 2 / serial: wall {N} .*; 2 outcomes, identical: True$",
        rf"^ratio floor -n 2 / serial: wall {N} .*; 2 outcomes, identical: True$",
        rf"^  skills -n 2    gw0        start-up {N}, collection {N}, tests {N}, finish {N}",
        rf"^xdist's own cost per item .*: [+-]?{N} ms CPU",
    )
