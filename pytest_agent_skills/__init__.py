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

#: Each module and the public names it defines.
_MODULES = {
    "errors": ("AgentSkillsError",),
    "findings": ("Finding", "Severity"),
    "skill": ("Skill",),
    "repository": ("SkillRepository", "UnknownSkillError"),
    "rules": ("ValidationOptions", "validate", "validate_paths"),
    "sources": ("resolve_root", "SourceError"),
    "workspace": ("create_runtime", "RunResult", "Workspace", "WorkspaceError"),
    "protocol": ("SkillSession", "SessionOptions", "ToolPool", "ToolOutcome", "AssembledRequest"),
    "scenario": ("Scenario", "load_scenarios"),
    "harness": (
        "run_conversation",
        "Conversation",
        "RunSettings",
        "Trajectory",
        "assert_trajectory",
    ),
    "glue.scenarios": ("SkillAgent",),
    "glue.workspace_fixtures": ("SkillWorkspace", "SkillWorkspaceFactory"),
    "evals.client.eval_client": ("BenchmarkSpec", "EvalClient", "EvalInterrupted", "ImproveLoop"),
    "evals.setup.eval_options": ("EvalOptions",),
    "evals.triggers.matrix": ("MatrixBars",),
}
#: Public name -> module defining it.
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

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
