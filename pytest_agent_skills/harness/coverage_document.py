"""The skill coverage report (``--skills-coverage-json``) as a typed document: what
:meth:`~.coverage.CoverageCollector.write` writes, its JSON Schema shipped in the package
(``schemas/skill-coverage.schema.json``)."""

from __future__ import annotations

from pydantic import Field

from ..typed_documents import Document, Part


class SkillCoverage(Part):
    """What the scenarios exercised of one skill folder."""

    name: str
    path: str = Field(description="the skill's folder")
    loaded: bool = Field(description="a conversation loaded it")
    docs: list[str] = Field(description="the skill's docs, relative to its folder")
    docs_selected: list[str] = Field(description="the docs a conversation selected")
    scripts: list[str] = Field(description="the skill's scripts, relative to its folder")
    scripts_ran: list[str] = Field(
        description="the scripts a successful skill_run or skill_exec command named"
    )
    tools: list[str] = Field(description="the tools its Tools: section declares")
    tools_called: list[str] = Field(description="the declared tools the model called")
    scenarios: int = Field(ge=0, description="the conversations that offered the skill")
    scenarios_loaded: int = Field(ge=0, description="of those, the ones that loaded it")


class SkillCoverageDocument(Document):
    """Which skills, docs, scripts and declared tools the scenarios of a pytest run
    exercised."""

    NAME = "skill-coverage"

    skills: list[SkillCoverage]
