"""Drive the reference skills system (trpc-agent-py 1.2.0) with scripted tool calls.

Runs with the reference virtualenv's python, never ours.  Reads one JSON
document on stdin::

    {"roots": [...], "work_root": "...", "sequences": [
        {"id": "...", "dynamic": false, "only_active_skills": true, "pool": ["tool", ...],
         "steps": [{"call": "skill_load", "args": {...}}, {"turn": true}, {"request": true}]}]}

and prints one JSON document: for each sequence, one record per step.  A
call gives the result as the model would see it (non-dict results wrapped as
``{"result": value}``, exceptions as the framework's ``tool_execution_error``
dict, pydantic results dumped), the state delta and the merged state; a
request gives the overview lines, the loaded-skill text of the system
instruction and the names the dynamic tool set exposes.  The skills package
is imported once (it takes seconds) and every sequence runs in this process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

from pydantic import BaseModel
from trpc_agent_sdk.agents import LlmAgent
from trpc_agent_sdk.agents.core._skill_processor import SkillsRequestProcessor
from trpc_agent_sdk.context import AgentContext, InvocationContext
from trpc_agent_sdk.models import LlmRequest
from trpc_agent_sdk.sessions import InMemorySessionService
from trpc_agent_sdk.skills import (
    DynamicSkillToolSet,
    FsSkillRepository,
    SkillToolSet,
    SkillToolSetWithDynamicTools,
)
from trpc_agent_sdk.tools import FunctionTool

OVERVIEW_HEADER = "Available skills:"


def stub_tool(name: str) -> FunctionTool:
    def stub(city: str = "") -> dict[str, str]:
        """A stub tool."""
        return {"tool": name, "city": city}

    stub.__name__ = name
    stub.__qualname__ = name
    return FunctionTool(stub)


def jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return json.loads(value.model_dump_json())
    return json.loads(json.dumps(value, default=str))


def model_view(value: Any) -> Any:
    """The function response content the model receives (see REFERENCE-BEHAVIOUR §2)."""
    value = jsonable(value)
    return value if isinstance(value, dict) else {"result": value}


def state_view(state: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if value is not None}


class Sequence:
    def __init__(self, spec: dict[str, Any], repository: FsSkillRepository, service: Any) -> None:
        self.spec = spec
        self.repository = repository
        self.service = service

    async def run(self) -> list[dict[str, Any]]:
        spec = self.spec
        session = await self.service.create_session(
            app_name="oracle", user_id="user", session_id=spec["id"]
        )
        ctx = InvocationContext(
            session_service=self.service,
            invocation_id=f"inv-{spec['id']}",
            agent=LlmAgent(name="", model="gpt-4o"),
            agent_context=AgentContext(),
            session=session,
        )
        toolset_class = SkillToolSetWithDynamicTools if spec.get("dynamic") else SkillToolSet
        toolset = toolset_class(repository=self.repository)
        tools = {tool.name: tool for tool in await toolset.get_tools(ctx)}
        dynamic = DynamicSkillToolSet(
            self.repository,
            available_tools=[stub_tool(name) for name in spec.get("pool", [])],
            only_active_skills=spec.get("only_active_skills", True),
        )
        records = []
        for step in spec["steps"]:
            if "call" in step:
                records.append(await self.call(ctx, tools, step["call"], step.get("args", {})))
            elif step.get("turn"):
                for key, value in ctx.actions.state_delta.items():
                    if value is None:
                        session.state.pop(key, None)
                    else:
                        session.state[key] = value
                ctx.actions.state_delta.clear()
                records.append({"turn": True})
            elif step.get("request"):
                records.append(await self.request(ctx, dynamic))
        return records

    async def call(
        self, ctx: InvocationContext, tools: dict[str, Any], name: str, args: dict[str, Any]
    ) -> dict[str, Any]:
        # To see exactly what this call writes, the turn's pending delta moves into the
        # session state for the call (readers see the same merged view) and comes back after.
        pending = dict(ctx.actions.state_delta)
        committed = dict(ctx.session.state)
        ctx.session.state.update(pending)
        ctx.actions.state_delta.clear()
        try:
            result = model_view(await tools[name].run_async(tool_context=ctx, args=args))
            # A function tool answers a missing mandatory argument with {"error": ...}.
            is_error = set(result) == {"error"}
        except Exception as error:  # the framework's conversion of a tool exception
            result = {"error": "tool_execution_error", "message": str(error), "status": "failed"}
            is_error = True
        delta = dict(ctx.actions.state_delta)
        ctx.session.state.clear()
        ctx.session.state.update(committed)
        ctx.actions.state_delta.clear()
        ctx.actions.state_delta.update({**pending, **delta})
        merged = {**ctx.session_state, **ctx.actions.state_delta}
        return {
            "call": name,
            "result": result,
            "is_error": is_error,
            "delta": jsonable(delta),
            "state": jsonable(state_view(merged)),
        }

    async def request(self, ctx: InvocationContext, dynamic: DynamicSkillToolSet) -> dict[str, Any]:
        processor = SkillsRequestProcessor(self.repository, load_mode="session")
        full = LlmRequest()
        await processor.process_llm_request(ctx, full)
        system = str(full.config.system_instruction) if full.config else ""
        # The overview guard: a system text already holding the header gets no overview,
        # so what is appended after it is exactly the loaded-skill text.
        guarded = LlmRequest()
        guarded.append_instructions([OVERVIEW_HEADER])
        await processor.process_llm_request(ctx, guarded)
        loaded = str(guarded.config.system_instruction)[len(OVERVIEW_HEADER) :]
        loaded = loaded[2:] if loaded.startswith("\n\n") else loaded
        exposed = [tool.name for tool in await dynamic.get_tools(ctx)]
        return {
            "request": True,
            "overview": system.split("\n\n", 1)[0],
            "loaded_text": loaded,
            "dynamic_tools": exposed,
        }


async def main() -> None:
    logging.disable(logging.CRITICAL)
    spec = json.load(sys.stdin)
    repository = FsSkillRepository(*spec["roots"])
    service = InMemorySessionService()
    output = {}
    for sequence in spec["sequences"]:
        output[sequence["id"]] = await Sequence(sequence, repository, service).run()
    json.dump(output, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    asyncio.run(main())
