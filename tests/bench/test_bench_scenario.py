"""bench/scenario.py runs one round and prints its goal ratios (without commands, and what the
harness adds with them), every path and its floors."""

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER
PATHS = (
    "protocol floor",
    "direct",
    "SDK floor",
    "sdk",
    "SDK floor, streamed",
    "sdk-stream",
    "replayed cassette",
    "SDK floor, commands",
    "SDK floor, no commands",
    "sdk, no commands",
)


def test_one_round_prints_the_goal_ratios_and_every_path() -> None:
    output = run_bench("scenario.py", "1", timeout=300)
    assert_lines(
        output,
        rf"^10-turn scenario, 1 rounds round robin, .*load average {N}",
        r"^goals: the scenario without commands through the SDK <= 1.3x its SDK floor",
        rf"^  no commands: sdk / SDK floor\s+x{N}\s+(met|not met)\s+\({N} / {N} ms; minima x{N}\)$",
        rf"^  commands: \(sdk - direct\) / floor\s+x{N}\s+(met|not met)\s+\({N} - {N} / {N} ms\)$",
        rf"^  sdk / SDK floor\s+x{N}\s+(met|not met)\s+\({N} / {N} ms; minima x{N}\)$",
        rf"^  sdk-stream / SDK floor, streamed\s+x{N}\s+(met|not met)\s+",
        *(rf"^  {path}\s+{N}ms\s+{N}ms$" for path in PATHS),
        rf"^  direct / protocol floor x{N}$",
        rf"^  a folder made and removed: {N} ms in .*; the conversation's workspace makes and"
        rf" removes 15 folders \(0 without its commands\)$",
        rf"^TCP connections opened by sdk: {N} in a conversation, {N} in the next",
        rf"^TCP connections opened by sdk-stream: {N} in a conversation, {N} in the next",
    )
