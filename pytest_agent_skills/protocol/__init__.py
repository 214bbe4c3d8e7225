"""The skill tool protocol: ``skill_*`` tools, session state, prompt assembly, dynamic tools.

Drive it without a model::

    session = SkillSession(repository, dynamic_tools=True, tool_pool=pool)
    session.call("skill_load", {"skill_name": "weather-tools"})
    request = session.build_request([{"role": "user", "content": "Weather in Paris?"}])
    request.system, request.tools
"""

from __future__ import annotations

from .outcome import ToolOutcome, error_result
from .pool import PoolTool, ToolPool, ToolPoolError, schema_from_signature
from .prompt import AssembledRequest, MissingTool
from .session import MissingToolError, SkillSession
from .state import Selection, docs_key, loaded_key, tools_key
from .tools import ALL_TOOLS, BASE_TOOLS, DYNAMIC_TOOLS, SkillTool

__all__ = [
    "ALL_TOOLS",
    "BASE_TOOLS",
    "DYNAMIC_TOOLS",
    "AssembledRequest",
    "MissingTool",
    "MissingToolError",
    "PoolTool",
    "Selection",
    "SkillSession",
    "SkillTool",
    "ToolOutcome",
    "ToolPool",
    "ToolPoolError",
    "docs_key",
    "error_result",
    "loaded_key",
    "schema_from_signature",
    "tools_key",
]
