"""docs/audit.md carries every audit rule as the catalogue declares it, and the README links it."""

from __future__ import annotations

from pathlib import Path

from pytest_agent_skills.audit.catalogue import markdown_table

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "audit.md"


def test_the_rule_table_is_the_generated_one() -> None:
    text = PAGE.read_text(encoding="utf-8")
    block = text[text.index("<!-- audit-rules:begin") : text.index("<!-- audit-rules:end")]
    assert block[block.index("\n") + 1 :] == markdown_table(), (
        "docs/audit.md is stale: paste audit.catalogue.markdown_table() between its markers"
    )


def test_the_readme_links_the_page() -> None:
    assert "(docs/audit.md)" in (REPO / "README.md").read_text(encoding="utf-8")
