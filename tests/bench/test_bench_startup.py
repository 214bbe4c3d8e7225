"""bench/startup.py runs each variant once and prints its times and ratios to both floors."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER
VARIANTS = (
    "floor: pytest alone",
    "pytest with ours",
    "floor: installed plugins",
    "installed plugins with ours",
)


def test_one_run_prints_every_variant_and_both_ratios() -> None:
    output = run_bench("startup.py", "--runs", "1", timeout=300)
    assert_lines(
        output,
        rf"^pytest --co of one plain test, 1 runs each \(ms\); load average {N}",
        *(rf"^  {variant}\s+{N}\s+{N}\s+{N}$" for variant in VARIANTS),
        *(
            rf"^ratio '{ours}' / '{floor}': wall median {N}, wall fastest {N},"
            rf" CPU median {N} \(\+?-?{N} ms CPU; goal <= 1\.15\)$"
            for ours, floor in (VARIANTS[1::-1], VARIANTS[:1:-1])
        ),
        r"^package modules imported: pytest_agent_skills ",
        r"^heavy modules imported: ",
    )
