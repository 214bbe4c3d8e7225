"""pytest-agent-skills: test Agent Skills with pytest.

The public API, a short explicit list; each name is imported on first use so
that loading the pytest plugin stays cheap::

    from pytest_agent_skills import Skill, SkillRepository, validate
    from pytest_agent_skills import create_runtime, SkillSession, run_conversation
"""

from __future__ import annotations

import importlib
from typing import Any

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
    "ToolPool": "protocol",
    "ToolOutcome": "protocol",
    "AssembledRequest": "protocol",
    "Scenario": "scenario",
    "load_scenarios": "scenario",
    "run_conversation": "harness",
    "Trajectory": "harness",
    "assert_trajectory": "harness",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
