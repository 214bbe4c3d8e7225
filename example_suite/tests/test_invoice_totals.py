"""Run the invoice-totals skill's script in a workspace and check the files it writes."""

import json

INVOICES = (
    "customer,item,quantity,unit_price\nacme,bolts,10,0.5\nacme,nuts,4,0.25\nglobex,gears,2,12.5\n"
)


def test_totals_per_customer(skill_workspace):
    workspace = skill_workspace("invoice-totals", inputs={"march.csv": INVOICES})

    result = workspace.run("python3 scripts/totals.py", output_files=["$OUTPUT_DIR/totals.json"])

    assert result.exit_code == 0, result.stderr
    assert result.stdout == "2 customers, grand total 31.0\n"
    assert [file.name for file in result.output_files] == ["out/totals.json"]
    totals = json.loads(workspace.assert_output_exists("out/totals.json").read_text())
    assert totals == {"customers": {"acme": 6.0, "globex": 25.0}, "grand_total": 31.0}
    workspace.assert_output_matches_expected("out/totals.json", "expected/totals.json")


def test_a_bad_row_is_named_and_fails(skill_workspace):
    workspace = skill_workspace(
        "invoice-totals",
        inputs={"bad.csv": "customer,item,quantity,unit_price\nacme,bolts,ten,1\n"},
    )

    result = workspace.run("python3 scripts/totals.py")

    assert result.exit_code == 1
    assert result.stderr == "bad.csv:2: bad quantity or unit_price\n"
