"""The skill tool protocol: ``skill_*`` tools, session state, prompt assembly, dynamic tools.

Drive it without a model::

    session = SkillSession(repository, dynamic_tools=True, tool_pool=pool)
    session.call("skill_load", {"skill_name": "weather-tools"})
    request = session.build_request([{"role": "user", "content": "Weather in Paris?"}])
    request.system, request.tools
"""

from __future__ import annotations

from .coercion import LEFT_OUT, Coercion, coerce_arguments
from .outcome import ToolOutcome, error_result
from .pool import PoolTool, ToolPool, ToolPoolError, schema_from_signature
from .prompt import AssembledRequest, MissingTool
from .session import MissingToolError, SessionConfigError, SkillSession
from .session_options import SessionOptionFields, SessionOptions
from .state import (
    DEFAULT_LOAD_MODE,
    LOAD_MODES,
    Selection,
    StateKeys,
    docs_key,
    loaded_key,
    tools_key,
)
from .tools import ALL_TOOLS, BASE_TOOLS, DYNAMIC_TOOLS, SkillTool

__all__ = [
    "ALL_TOOLS",
    "BASE_TOOLS",
    "DEFAULT_LOAD_MODE",
    "DYNAMIC_TOOLS",
    "LEFT_OUT",
    "LOAD_MODES",
    "AssembledRequest",
    "Coercion",
    "MissingTool",
    "MissingToolError",
    "PoolTool",
    "Selection",
    "SessionConfigError",
    "SessionOptionFields",
    "SessionOptions",
    "SkillSession",
    "SkillTool",
    "StateKeys",
    "ToolOutcome",
    "ToolPool",
    "ToolPoolError",
    "coerce_arguments",
    "docs_key",
    "error_result",
    "loaded_key",
    "schema_from_signature",
    "tools_key",
]
