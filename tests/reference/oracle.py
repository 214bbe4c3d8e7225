"""Drive the reference skills system (trpc-agent-py 1.2.0) with scripted tool calls.

Runs with the reference virtualenv's python, never ours.  Reads one JSON
document on stdin::

    {"roots": [...], "work_root": "...", "sequences": [
        {"id": "...", "dynamic": false, "only_active_skills": true, "pool": ["tool", ...],
         "load_mode": "turn",  (null: the reference's default, nothing configured)
         "steps": [{"call": "skill_load", "args": {...}}, {"model_step": true},
                   {"request": true}, {"user_turn": true}]}]}

and prints one JSON document: for each sequence, one record per step.  A
call gives the result as the model would see it (non-dict results wrapped as
``{"result": value}``, exceptions as the framework's ``tool_execution_error``
dict, pydantic results dumped), the state delta and the merged state; a
request gives the overview lines, the loaded-skill text of the system
instruction, the names the dynamic tool set exposes and the state after it.
The skills package is imported once (it takes seconds) and every sequence runs
in this process.

Each sequence is a conversation with one session in the reference's
``InMemorySessionService``.  A call of a pool tool goes through the
framework's ``ToolsProcessor`` as a model's call does: the tools are resolved
again at the call, and a tool the tool sets do not offer then is answered with
its ``tool_not_found`` error.  A ``model_step`` step ends one model step as the
runner does: the invocation's state delta is appended to the session as an
event, and the delta stays what it is - the reference keeps one
``EventActions`` for the whole invocation, so what its tools and request
processors read from ``state_delta`` (the skills ``only_active_skills``
counts, the keys once mode cleared) lasts until the next user message.  A
``user_turn`` step appends the delta too, then starts a new invocation as
``Runner.run_async`` does for the next user message: the session fetched again
from the service (which never keeps ``temp:`` keys), a new ``AgentContext`` and
``InvocationContext`` with an empty delta.  Every invocation opens with one LLM
request (a real agent asks the model before any tool call), which is where the
``turn`` load mode clears.  The load mode is set the way the reference reads
it: in the agent context's skill config (copied, never the shared
``DEFAULT_SKILL_CONFIG``) and for the request processor.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import sys
from typing import Any

from pydantic import BaseModel
from trpc_agent_sdk.agents import LlmAgent
from trpc_agent_sdk.agents.core._skill_processor import SkillsRequestProcessor
from trpc_agent_sdk.agents.core._tools_processor import ToolsProcessor
from trpc_agent_sdk.context import AgentContext, InvocationContext
from trpc_agent_sdk.events import Event, EventActions
from trpc_agent_sdk.models import LlmRequest
from trpc_agent_sdk.sessions import InMemorySessionService
from trpc_agent_sdk.skills import (
    DynamicSkillToolSet,
    FsSkillRepository,
    SkillToolSet,
    SkillToolSetWithDynamicTools,
)
from trpc_agent_sdk.skills._skill_config import DEFAULT_SKILL_CONFIG, set_skill_config
from trpc_agent_sdk.tools import FunctionTool
from trpc_agent_sdk.types import FunctionCall


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
    """The function response content the model receives."""
    value = jsonable(value)
    return value if isinstance(value, dict) else {"result": value}


def state_view(state: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if value is not None}


class Sequence:
    def __init__(self, spec: dict[str, Any], repository: FsSkillRepository, service: Any) -> None:
        self.spec = spec
        self.repository = repository
        self.service = service
        self.load_mode = spec.get("load_mode", "turn")
        self.invocations = 0

    async def run(self) -> list[dict[str, Any]]:
        spec = self.spec
        await self.service.create_session(app_name="oracle", user_id="user", session_id=spec["id"])
        toolset_class = SkillToolSetWithDynamicTools if spec.get("dynamic") else SkillToolSet
        self.toolset = toolset_class(repository=self.repository)
        dynamic = DynamicSkillToolSet(
            self.repository,
            available_tools=[stub_tool(name) for name in spec.get("pool", [])],
            only_active_skills=spec.get("only_active_skills", True),
        )
        self.dynamic = dynamic
        ctx = await self.invocation()
        tools = {tool.name: tool for tool in await self.toolset.get_tools(ctx)}
        records = []
        for step in spec["steps"]:
            if "call" in step and step["call"] not in tools:
                records.append(await self.model_call(ctx, step["call"], step.get("args", {})))
            elif "call" in step:
                records.append(await self.call(ctx, tools, step["call"], step.get("args", {})))
            elif step.get("model_step"):
                await self.commit(ctx)
                records.append({"model_step": True})
            elif step.get("user_turn"):
                await self.commit(ctx)
                ctx = await self.invocation()
                records.append({"user_turn": True, "state": jsonable(state_view(merged(ctx)))})
            elif step.get("request"):
                records.append(await self.request(ctx, dynamic))
        return records

    async def invocation(self) -> InvocationContext:
        """A new invocation (the next user message), opened by its first LLM request."""
        self.invocations += 1
        session = await self.service.get_session(
            app_name="oracle", user_id="user", session_id=self.spec["id"]
        )
        agent_context = AgentContext()
        if self.load_mode is not None:  # null: the reference's own default, nothing configured
            config = copy.deepcopy(DEFAULT_SKILL_CONFIG)
            config["skill_processor"]["load_mode"] = self.load_mode
            set_skill_config(agent_context, config)
        ctx = InvocationContext(
            session_service=self.service,
            invocation_id=f"inv-{self.spec['id']}-{self.invocations}",
            agent=LlmAgent(name="", model="gpt-4o"),
            agent_context=agent_context,
            session=session,
        )
        await self.toolset.get_tools(ctx)  # puts the repository into the agent context
        await self.processor().process_llm_request(ctx, LlmRequest())
        return ctx

    def processor(self) -> SkillsRequestProcessor:
        if self.load_mode is None:
            return SkillsRequestProcessor(self.repository)
        return SkillsRequestProcessor(self.repository, load_mode=self.load_mode)

    async def commit(self, ctx: InvocationContext) -> None:
        """The invocation's state delta appended to the session as one event, as the runner
        appends each tool event (which carries the whole delta); the delta itself stays."""
        event = Event(
            invocation_id=ctx.invocation_id,
            author="oracle",
            actions=EventActions(state_delta=dict(ctx.actions.state_delta)),
        )
        await self.service.append_event(ctx.session, event)

    async def model_call(self, ctx: InvocationContext, name: str, args: dict[str, Any]) -> dict:
        """A call of a pool tool, answered as the framework answers a model's call."""
        processor = ToolsProcessor([self.toolset, self.dynamic])
        call = FunctionCall(id=f"call-{name}", name=name, args=args)
        events = [event async for event in processor.execute_tools_async([call], ctx)]
        (part,) = [p for e in events for p in e.content.parts if p.function_response]
        result = jsonable(part.function_response.response)
        return {
            "call": name,
            "result": result,
            "is_error": isinstance(result, dict) and result.get("status") == "failed",
            "delta": {},
            "state": jsonable(state_view(merged(ctx))),
        }

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
        return {
            "call": name,
            "result": result,
            "is_error": is_error,
            "delta": jsonable(delta),
            "state": jsonable(state_view(merged(ctx))),
        }

    async def request(self, ctx: InvocationContext, dynamic: DynamicSkillToolSet) -> dict[str, Any]:
        # The reference's RequestProcessor adds the tools before the skills text.
        exposed = [tool.name for tool in await dynamic.get_tools(ctx)]
        processor = self.processor()
        full = LlmRequest()
        await processor.process_llm_request(ctx, full)
        system = str(full.config.system_instruction) if full.config else ""
        # The overview alone (no state effect), so that what follows it is the loaded text.
        alone = LlmRequest()
        processor._inject_overview(ctx, alone, self.repository)
        overview = str(alone.config.system_instruction) if alone.config else ""
        loaded = system[len(overview) :]
        loaded = loaded[2:] if loaded.startswith("\n\n") else loaded
        return {
            "request": True,
            "overview": system.split("\n\n", 1)[0],
            "loaded_text": loaded,
            "dynamic_tools": exposed,
            "state": jsonable(state_view(merged(ctx))),
        }


def merged(ctx: InvocationContext) -> dict[str, Any]:
    return {**ctx.session_state, **ctx.actions.state_delta}


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
