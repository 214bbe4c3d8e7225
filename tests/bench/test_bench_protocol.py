"""bench/protocol.py runs and prints the tool payload of every stage and its saving."""

import re

from tests.support.bench import NUMBER, assert_lines, run_bench

N = NUMBER


def test_prints_the_payload_and_saving_of_every_stage() -> None:
    output = run_bench("protocol.py", timeout=120)
    assert_lines(
        output,
        rf"^pool: {N} tools, {N} bytes, ~{N} tokens",
        rf"^skill_\* tools: {N} bytes .*, {N} bytes ",
        rf"^static \(whole pool, no dynamic\)\s+{N}\s+{N}\s+-\s+{N}\s+{N}\s+-$",
        *(
            rf"^{re.escape(stage)}\s+{N}\s+{N}\s+{N}%\s+{N}\s+{N}\s+-?{N}%$"
            for stage in (
                "nothing loaded",
                "1 skill loaded (5 tools)",
                "after skill_select_tools (2 tools)",
                "2nd skill loaded (+5 tools)",
            )
        ),
        r"^reference claim: ",
    )
