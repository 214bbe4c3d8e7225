"""Drive the reference's interactive tools (trpc-agent-py 1.2.0) with scripted calls.

Runs with the reference virtualenv's python, never ours.  Reads one JSON document on stdin::

    {"roots": [...], "sequences": [{"id": "...", "allowed_cmds": null, "steps": [
        {"call": "skill_exec", "args": {...}},
        {"call": "skill_write_stdin", "args": {"session_id": "$session", "chars": "x"}},
        {"poll_until_exit": 40},
        {"tool_names": true}]}]}

and prints one JSON document: for each sequence, one record per step.  ``"$session"`` in the
arguments stands for the session id the last ``skill_exec`` returned.  The exec tools come
from ``create_exec_tools(run_tool)`` over the ``skill_run`` of a ``SkillToolSet`` (its tool set
offers ``skill_exec`` alone; ``tool_names`` records what it offers).  A call gives the result
as the model sees it, exceptions as the framework's ``tool_execution_error`` dict.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

from trpc_agent_sdk.agents import LlmAgent
from trpc_agent_sdk.context import AgentContext, InvocationContext
from trpc_agent_sdk.sessions import InMemorySessionService
from trpc_agent_sdk.skills import FsSkillRepository, SkillToolSet
from trpc_agent_sdk.skills.tools import SkillRunTool
from trpc_agent_sdk.skills.tools._skill_exec import create_exec_tools

SESSION = "$session"


async def run_sequence(spec: dict[str, Any], repository: Any, service: Any) -> list[dict]:
    session = await service.create_session(app_name="oracle", user_id="user", session_id=spec["id"])
    ctx = InvocationContext(
        session_service=service,
        invocation_id=f"inv-{spec['id']}",
        agent=LlmAgent(name="", model="gpt-4o"),
        agent_context=AgentContext(),
        session=session,
    )
    toolset = SkillToolSet(repository=repository)
    offered = [tool.name for tool in await toolset.get_tools(ctx)]
    run_tool = SkillRunTool(repository=repository, allowed_cmds=spec.get("allowed_cmds"))
    tools = {tool.name: tool for tool in create_exec_tools(run_tool)}
    current = ""
    records: list[dict] = []
    for step in spec["steps"]:
        if step.get("tool_names"):
            records.append({"tool_names": offered})
        elif "poll_until_exit" in step:
            polls = []
            for _ in range(step["poll_until_exit"]):
                result = await call(ctx, tools["skill_poll_session"], {"session_id": current})
                polls.append(result)
                if result.get("status") != "running":
                    break
            records.append({"polls": polls})
        else:
            arguments = {
                key: current if value == SESSION else value for key, value in step["args"].items()
            }
            result = await call(ctx, tools[step["call"]], arguments)
            if step["call"] == "skill_exec" and "session_id" in result:
                current = result["session_id"]
            records.append({"call": step["call"], "result": result})
    return records


async def call(ctx: InvocationContext, tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await tool.run_async(tool_context=ctx, args=arguments)
    except Exception as error:  # the framework's conversion of a tool exception
        return {"error": "tool_execution_error", "message": str(error), "status": "failed"}
    return json.loads(json.dumps(result, default=str))


async def main() -> None:
    logging.disable(logging.CRITICAL)
    spec = json.load(sys.stdin)
    repository = FsSkillRepository(*spec["roots"], enable_hot_reload=False)
    service = InMemorySessionService()
    output = {}
    for sequence in spec["sequences"]:
        output[sequence["id"]] = await run_sequence(sequence, repository, service)
    json.dump(output, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    asyncio.run(main())
