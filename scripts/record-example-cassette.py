"""Re-record example_suite/tests/cassettes/invoice-agent.json.

A real project records its cassettes against a real model:
``pytest --skills-record=once --skills-upstream-url=https://.../v1``. This repository must not
reach a real model, so a scripted stand-in plays the upstream on a loopback port; everything
else (the harness, the recording, the redaction, the file format) is what a user's recording
goes through.
"""

from __future__ import annotations

from pathlib import Path

from pytest_agent_skills.harness import (
    LoopbackServer,
    RunSettings,
    ScriptedBackend,
    ScriptedModel,
    Upstream,
    run_conversation,
)
from pytest_agent_skills.repository import SkillRepository

SUITE = Path(__file__).resolve().parent.parent / "example_suite"
CASSETTE = SUITE / "tests" / "cassettes" / "invoice-agent.json"
USER = "How much does acme owe in total? The invoices are in my inputs."
INPUTS = {"april.csv": "customer,item,quantity,unit_price\nacme,bolts,100,0.2\nacme,rivets,10,1\n"}
STAND_IN_MODEL = [
    {"call": "skill_list", "args": {}},
    {"call": "skill_load", "args": {"skill_name": "invoice-totals"}},
    {
        "call": "skill_run",
        "args": {
            "skill": "invoice-totals",
            "command": "python3 scripts/totals.py",
            "output_files": ["$OUTPUT_DIR/totals.json"],
        },
    },
    {"say": "acme owes 30.00 in total."},
]


def main() -> None:
    CASSETTE.unlink(missing_ok=True)
    repository = SkillRepository([SUITE / ".claude" / "skills"])
    with LoopbackServer(ScriptedBackend(ScriptedModel(STAND_IN_MODEL))) as upstream:
        options = RunSettings(
            record_mode="once", upstream=Upstream(upstream.base_url, "sk-stand-in")
        )
        outcome = run_conversation(
            repository,
            USER,
            cassette=CASSETTE,
            settings=options,
            inputs=INPUTS,
            model_name="gpt-4o-mini",
        )
    print(
        f"recorded {CASSETTE.relative_to(SUITE.parent)}: final answer {outcome.trajectory.final!r}"
    )


if __name__ == "__main__":
    main()
