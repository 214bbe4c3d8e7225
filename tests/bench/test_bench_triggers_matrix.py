"""bench/triggers_matrix.py --small records a small repository's matrix and prints the replay's
wall and processor times against the goal, and the floor of a replay with nothing to replay."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER


def test_small_prints_the_replay_against_its_goal_and_floor() -> None:
    output = run_bench("triggers_matrix.py", "--small", timeout=600)
    assert_lines(
        output,
        rf"^load average {N}; 5 skills, 90 runs recorded$",
        rf"^replay: {N} s for 90 runs, processor {N} s \(goal <= 5 s: (met|NOT met)\)$",
        rf"^floor: {N} s, processor {N} s \(one query\); -?{N} ms of processor a run above$",
    )
