"""bench/collect.py runs on a few skills and prints default pytest, --tb=no and the CLI, their
ratios, and the times at twice the skills over the times at the first size."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER


def test_a_few_skills_print_the_figures_and_the_ratios() -> None:
    output = run_bench("collect.py", "--skills", "6", "--runs", "1", "--double", timeout=600)
    assert_lines(
        output,
        rf"^load average {N}, {N}, {N} before; median of 1 runs, whole processes;"
        r" skills_items=skill$",
        r"^6 skills, 2 failing 4 checks each:",
        r"^12 skills, 4 failing 4 checks each:",
        *(
            rf"^  {name}\s+{N}\s+{N}$"
            for name in ("pytest", r"pytest --tb=no", "agent-skills validate")
        ),
        rf"^  ratio \(wall\) pytest / pytest --tb=no: {N} \(goal <= 2\); pytest / agent-skills"
        rf" validate: {N} \(goal <= 10\)$",
        rf"^  ratio \(CPU\) pytest / pytest --tb=no: {N} ",
        rf"^  \(wall\) time at 2x / time at 1x \(goal <= 2: linear\): pytest {N}, pytest --tb=no"
        rf" {N}, agent-skills validate {N}$",
        rf"^load average {N}, {N}, {N} after$",
    )


def test_the_per_check_view_is_measured_too() -> None:
    output = run_bench("collect.py", "--skills", "3", "--runs", "1", "--items", "check")
    assert_lines(output, r"skills_items=check$", rf"^  pytest\s+{N}\s+{N}$")


def test_the_whole_walk_is_measured_on_request() -> None:
    output = run_bench("collect.py", "--skills", "3", "--runs", "1", "--whole-walk")
    assert_lines(
        output,
        rf"^  pytest, whole walk\s+{N}\s+{N}$",
        rf"^  ratio \(wall\) pytest, whole walk / pytest: {N}"
        r" \(skills_walk_skill_folders = true\)$",
        rf"^  ratio \(CPU\) pytest, whole walk / pytest: {N} ",
    )
