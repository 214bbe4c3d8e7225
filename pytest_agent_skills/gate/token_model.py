"""The token report (``agent-skills tokens --format json``): one typed model, whose JSON Schema
ships in the package (``schemas/tokens.schema.json``).

    {"version": 1, "estimator", "budgets": {"body", "doc", "listing", "fail"},
     "skills": [{"name", "path", "description", "body", "docs": [{"path", "tokens"}],
                }],
     "listing": tokens of every name and description,
     "over": [{"rule", "skill", "part", "tokens", "budget", "severity"}],
     "compare": null or {"ref", "commit", "threshold", "changes": [...]}}
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from ..typed_documents import Part, schema_field

#: The budget rules: the part of a skill each one weighs.
BudgetRule = Literal["budget-body", "budget-doc", "budget-listing"]


class DocTokens(Part):
    """One doc of a skill and what reading it costs."""

    path: str = Field(description="the doc, relative to the skill folder")
    tokens: int = Field(ge=0)


class SkillTokens(Part):
    """What one skill costs an agent."""

    name: str
    path: str = Field(description="the skill folder, as the command found it")
    description: int = Field(
        ge=0, description="tokens of the name and description, paid on every request"
    )
    body: int = Field(ge=0, description="tokens of the body, paid when the skill loads")
    docs: list[DocTokens] = Field(description="each doc, paid when the agent reads it")


class Budgets(Part):
    """The budgets the skills were weighed against (tokens)."""

    body: int = Field(ge=0)
    doc: int = Field(ge=0)
    listing: int = Field(ge=0)
    fail: bool = Field(description="whether a budget exceeded fails the run")


class OverBudget(Part):
    """A part of a skill (or the listing of all) over its budget."""

    rule: BudgetRule
    skill: str = Field(description="the skill's name; empty for the listing of all")
    part: str = Field(description="'body', a doc's path, or 'listing'")
    tokens: int = Field(ge=0)
    budget: int = Field(ge=0)
    severity: Literal["error", "warning"]


class TokenChange(Part):
    """A skill's tokens (description and body) at the ref and now; null where it is absent."""

    name: str
    before: int | None = Field(ge=0)
    after: int | None = Field(ge=0)
    change: float | None = Field(description="after / before - 1; null when either is absent")
    over_threshold: bool


class Comparison(Part):
    """``--compare REF``: each skill's change against the ref."""

    ref: str
    commit: str
    threshold: float = Field(ge=0)
    changes: list[TokenChange]


class TokenReport(Part):
    """What ``agent-skills tokens --format json`` writes."""

    model_config = ConfigDict(populate_by_name=True, title="agent-skills tokens report")

    schema_: str = schema_field("tokens")
    version: Literal[1] = 1
    estimator: str = Field(description="how the tokens were counted, and its measured error")
    budgets: Budgets
    skills: list[SkillTokens]
    listing: int = Field(ge=0, description="every skill's name and description together")
    over: list[OverBudget]
    compare: Comparison | None = None
