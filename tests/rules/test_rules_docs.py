"""docs/rules.md documents every rule id with the code's check, severity and source."""

from __future__ import annotations

from pathlib import Path

from pytest_agent_skills.rules import CHECKS, PROFILES, RULES, profile_rule_table

RULES_DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def documented_rules() -> dict[str, tuple[str, str, str]]:
    text = RULES_DOC.read_text(encoding="utf-8")
    table = text.split("## Rules\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str, str]] = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = (cells[1], cells[2], cells[-1])
    return rows


def test_every_rule_is_documented_with_its_check_severity_and_source() -> None:
    expected = {rule.id: (rule.check, str(rule.severity), rule.source) for rule in RULES.values()}
    assert documented_rules() == expected


def test_rules_are_documented_in_check_order() -> None:
    checks = [check for check, _severity, _source in documented_rules().values()]
    assert checks == sorted(checks, key=CHECKS.index)


def test_profiles_are_documented() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    for name, profile in PROFILES.items():
        assert f"`{name}`" in text
        for field in profile.fields:
            assert f"`{field}`" in text, f"field {field} of profile {name} is not documented"


def test_the_profile_rule_table_is_the_generated_one() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    begin = text.index("<!-- profile-table:begin")
    table = text[text.index("\n", begin) + 1 : text.index("<!-- profile-table:end -->")]
    assert table == profile_rule_table()


def test_the_profile_rule_table_says_which_rules_each_profile_runs() -> None:
    rows = {
        line.split(" | ")[0].strip("| `"): [cell.strip() for cell in line.strip("|").split("|")][1:]
        for line in profile_rule_table().splitlines()[2:]
    }
    assert rows["tools-not-identifier"] == ["-", "-", "error"]
    assert rows["name-missing"] == ["error", "warning", "error"]
    assert rows["reference-missing"] == ["error", "error", "error"]
    assert set(rows) == set(RULES)
