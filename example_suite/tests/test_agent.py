"""Replay a recorded conversation with the skill_agent fixture and check what the agent did."""

from pytest_agent_skills.harness import expect_calls, expect_files

INPUTS = {"april.csv": "customer,item,quantity,unit_price\nacme,bolts,100,0.2\nacme,rivets,10,1\n"}


def test_the_recorded_agent_totals_the_invoices(skill_agent):
    trajectory = skill_agent.run(
        "How much does acme owe in total? The invoices are in my inputs.",
        cassette="cassettes/invoice-agent.json",
        inputs=INPUTS,
    )

    expect_calls(trajectory, ["skill_load", "skill_run"], mode="in_order", args="ignore")
    expect_files(trajectory, [{"path": "out/totals.json", "contains": '"grand_total": 30.0'}])
    assert trajectory.state["temp:skill:loaded:invoice-totals"] == "1"
    assert trajectory.final == "acme owes 30.00 in total."


def test_a_scripted_agent_that_forgets_to_load_the_skill(skill_agent):
    trajectory = skill_agent.run(
        "Totals please.",
        script=[
            {
                "call": "skill_run",
                "args": {"skill": "invoice-totals", "command": "python3 scripts/totals.py"},
            },
            {"say": "Done."},
        ],
        inputs=INPUTS,
    )

    # skill_run stages the skill by itself, as the reference does, so the run still works;
    # the skill was never loaded, so its instructions never reached the model.
    [run] = trajectory.calls
    assert run.result["exit_code"] == 0
    assert "temp:skill:loaded:invoice-totals" not in trajectory.state
