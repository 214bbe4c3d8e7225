"""pytest-agent-skills: test Agent Skills with pytest.

The public API, a short explicit list; each name is imported on first use so
that loading the pytest plugin stays cheap::

    from pytest_agent_skills import Skill, SkillRepository, validate
    from pytest_agent_skills import create_runtime, SkillSession, run_conversation
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ._lazy import lazy_exports

#: The distribution whose metadata gives ``__version__``: the version is written once, in
#: pyproject.toml, and read from what the installer recorded.
DISTRIBUTION = "pytest-agent-skills"
#: ``__version__`` of a checkout imported without being installed (no metadata to read).
NOT_INSTALLED = "0+unknown"

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
    "BenchmarkSpec": "evals.client.eval_client",
    "EvalClient": "evals.client.eval_client",
    "EvalInterrupted": "evals.client.eval_client",
    "EvalOptions": "evals.setup.eval_options",
    "ImproveLoop": "evals.client.eval_client",
    "MatrixBars": "evals.triggers.matrix",
}

__all__ = sorted(_EXPORTS)


if TYPE_CHECKING:  # the lazy names' own types, for type checkers
    __version__: str
    from .errors import AgentSkillsError as AgentSkillsError
    from .evals.client.eval_client import BenchmarkSpec as BenchmarkSpec
    from .evals.client.eval_client import EvalClient as EvalClient
    from .evals.client.eval_client import EvalInterrupted as EvalInterrupted
    from .evals.client.eval_client import ImproveLoop as ImproveLoop
    from .evals.setup.eval_options import EvalOptions as EvalOptions
    from .evals.triggers.matrix import MatrixBars as MatrixBars
    from .findings import Finding as Finding
    from .findings import Severity as Severity
    from .glue.scenarios import SkillAgent as SkillAgent
    from .glue.workspace_fixtures import SkillWorkspace as SkillWorkspace
    from .glue.workspace_fixtures import SkillWorkspaceFactory as SkillWorkspaceFactory
    from .harness import Conversation as Conversation
    from .harness import RunSettings as RunSettings
    from .harness import Trajectory as Trajectory
    from .harness import assert_trajectory as assert_trajectory
    from .harness import run_conversation as run_conversation
    from .protocol import AssembledRequest as AssembledRequest
    from .protocol import SessionOptions as SessionOptions
    from .protocol import SkillSession as SkillSession
    from .protocol import ToolOutcome as ToolOutcome
    from .protocol import ToolPool as ToolPool
    from .repository import SkillRepository as SkillRepository
    from .repository import UnknownSkillError as UnknownSkillError
    from .rules import ValidationOptions as ValidationOptions
    from .rules import validate as validate
    from .rules import validate_paths as validate_paths
    from .scenario import Scenario as Scenario
    from .scenario import load_scenarios as load_scenarios
    from .skill import Skill as Skill
    from .sources import SourceError as SourceError
    from .sources import resolve_root as resolve_root
    from .workspace import RunResult as RunResult
    from .workspace import Workspace as Workspace
    from .workspace import WorkspaceError as WorkspaceError
    from .workspace import create_runtime as create_runtime


_export, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


@functools.cache
def _installed_version() -> str:
    """pyproject.toml's version, as the installed distribution's metadata records it: read on
    first use, since finding a distribution walks the import path (~20 ms cold), which
    loading the plugin does not pay."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return NOT_INSTALLED


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _installed_version()
    return _export(name)
