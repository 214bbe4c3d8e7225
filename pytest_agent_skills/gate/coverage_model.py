"""The coverage report (``agent-skills coverage --format json``): one typed model, whose JSON
Schema ships in the package (``schemas/coverage.schema.json``).

    {"version": 1, "cassettes", "min_coverage",
     "skills": [{"name", "path", "evals", "triggers", "scenarios": {"count", "recorded",
                 "error"}, "covered"}],
     "summary": {"skills", "with_evals", "with_triggers", "with_scenarios", "recorded",
                 "covered", "coverage"}}
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from ..typed_documents import Part, schema_field


class KindCoverage(Part):
    """One kind of test of a skill: how many there are, how many replay offline."""

    count: int = Field(ge=0, description="evals, trigger queries or scenarios the skill has")
    recorded: int = Field(
        ge=0, description="of those, the ones with a recording (cassette, or a script) to replay"
    )
    error: str = Field(
        default="", description="why the file could not be read ('' when it was, or is absent)"
    )


class SkillCoverage(Part):
    """What tests one skill has."""

    name: str
    path: str = Field(description="the skill folder, as the command found it")
    evals: KindCoverage = Field(description="evals/evals.json and its eval cassettes")
    triggers: KindCoverage = Field(description="evals/triggers.json and its trigger cassettes")
    scenarios: KindCoverage = Field(description="*.scenario.yaml files in the skill folder")
    covered: bool = Field(
        description="it has evals or trigger queries, every one of them recorded (a CI replay"
        " runs them all offline)"
    )


class CoverageSummary(Part):
    """Totals over the skills."""

    skills: int = Field(ge=0)
    with_evals: int = Field(ge=0)
    with_triggers: int = Field(ge=0)
    with_scenarios: int = Field(ge=0)
    covered: int = Field(ge=0)
    coverage: float = Field(ge=0, le=1, description="covered / skills (1 with no skill)")


class CoverageReport(Part):
    """What ``agent-skills coverage --format json`` writes."""

    model_config = ConfigDict(populate_by_name=True, title="agent-skills coverage report")

    schema_: str = schema_field("coverage")
    version: Literal[1] = 1
    cassettes: str = Field(description="the eval cassette folder the recordings were looked for in")
    min_coverage: float = Field(ge=0, le=1, description="the gate: the coverage required")
    skills: list[SkillCoverage]
    summary: CoverageSummary

    @property
    def passed(self) -> bool:
        return self.summary.coverage >= self.min_coverage
