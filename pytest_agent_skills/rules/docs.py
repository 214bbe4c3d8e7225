"""The documentation of each rule, read from the rule page shipped in the package.

``rules.md`` in this package is ``docs/rules.md`` of the repository (a link in a checkout, a
copy in the sdist and the wheel), so ``agent-skills rule ID`` works from an installed wheel.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..errors import AgentSkillsError


@dataclass(frozen=True)
class RuleDoc:
    """One row of the rule table: what the rule finds and how to fix it."""

    id: str
    finds: str
    fix: str


def rules_page() -> str:
    """The text of the rule page (``docs/rules.md``)."""
    return resources.files(__package__).joinpath("rules.md").read_text(encoding="utf-8")


@cache
def rule_docs() -> dict[str, RuleDoc]:
    """Every documented rule, from the ``## Rules`` table of the page."""
    table = rules_page().split("\n## Rules\n", 1)[1].split("\n## ", 1)[0]
    docs: dict[str, RuleDoc] = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            rule_id = cells[0].strip("`")
            docs[rule_id] = RuleDoc(rule_id, finds=cells[3], fix=cells[4])
    return docs


def rule_doc(rule_id: str) -> RuleDoc:
    try:
        return rule_docs()[rule_id]
    except KeyError:
        raise AgentSkillsError(
            f"rule {rule_id!r} has no row in the rule page (rules.md); the package is incomplete"
        ) from None
