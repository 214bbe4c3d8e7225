"""pytest-agent-skills: test Agent Skills with pytest.

The public API, a short explicit list; each name is imported on first use so
that loading the pytest plugin stays cheap::

    from pytest_agent_skills import Skill, SkillRepository, validate
    from pytest_agent_skills import create_runtime, SkillSession, run_conversation
"""

from __future__ import annotations

from ._lazy import lazy_exports

__version__ = "0.1.0"

#: Public name -> module defining it.
_EXPORTS = {
    "AgentSkillsError": "errors",
    "Finding": "findings",
    "Severity": "findings",
    "Skill": "skill",
    "SkillRepository": "repository",
    "UnknownSkillError": "repository",
    "ValidationOptions": "rules",
    "validate": "rules",
    "validate_paths": "rules",
    "resolve_root": "sources",
    "SourceError": "sources",
    "create_runtime": "workspace",
    "RunResult": "workspace",
    "Workspace": "workspace",
    "WorkspaceError": "workspace",
    "SkillSession": "protocol",
    "SessionOptions": "protocol",
    "ToolPool": "protocol",
    "ToolOutcome": "protocol",
    "AssembledRequest": "protocol",
    "Scenario": "scenario",
    "load_scenarios": "scenario",
    "run_conversation": "harness",
    "SkillAgent": "glue.scenarios",
    "SkillWorkspace": "glue.workspace_fixtures",
    "SkillWorkspaceFactory": "glue.workspace_fixtures",
    "Conversation": "harness",
    "RunSettings": "harness",
    "Trajectory": "harness",
    "assert_trajectory": "harness",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
