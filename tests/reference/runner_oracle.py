"""Whole conversations through the reference's own ``Runner`` (trpc-agent-py 1.2.0), with a
scripted model.

Runs with the reference virtualenv's python, never ours.  Where ``oracle.py`` calls the tools
and the request processor one by one, this script leaves the order of things to the framework:
an ``LlmAgent`` with ``SkillToolSetWithDynamicTools`` and a ``DynamicSkillToolSet`` of stub
tools, run by ``Runner.run_async`` once per user message, with a model that answers each
request with the next tool calls of its script (then a text answer, which ends the user turn).
It is the recorded truth the step-by-step oracle is checked against.  Reads on stdin::

    {"roots": [...], "conversations": [{"id": "...", "load_mode": "once",
        "only_active_skills": true, "pool": ["tool", ...],
        "user_turns": [[[["skill_load", {"skill_name": "x"}]], [["tool", {"city": "Paris"}]]]]}]}

(``user_turns``: for each user message, the model's responses in order, each a list of
``[name, arguments]`` calls) and prints, for each conversation, ``requests`` (for every LLM
request: the user turn, the tool names offered, the skills shown under ``[Loaded]``) and
``responses`` (every function response: tool name and the response the model receives).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
import sys
from typing import Any

from oracle import jsonable, stub_tool
from trpc_agent_sdk.agents import LlmAgent
from trpc_agent_sdk.context import AgentContext
from trpc_agent_sdk.models import LLMModel, LlmResponse
from trpc_agent_sdk.runners import Runner
from trpc_agent_sdk.sessions import InMemorySessionService
from trpc_agent_sdk.skills import (
    DynamicSkillToolSet,
    FsSkillRepository,
    SkillToolSetWithDynamicTools,
)
from trpc_agent_sdk.skills._skill_config import DEFAULT_SKILL_CONFIG, set_skill_config
from trpc_agent_sdk.types import Content, FunctionCall, Part

LOADED = re.compile(r"^\[Loaded\] (.+)$", re.MULTILINE)


class ScriptedModel(LLMModel):
    """Answers each request with the next calls of the current user turn's script."""

    def __init__(self) -> None:
        super().__init__("scripted-model")
        self.script: list[list[list[Any]]] = []
        self.turn = 0
        self.requests: list[dict[str, Any]] = []

    @classmethod
    def supported_models(cls) -> list[str]:
        return [".*"]

    async def _generate_async_impl(self, request: Any, stream: bool = False, ctx: Any = None):
        system = str(request.config.system_instruction) if request.config else ""
        self.requests.append(
            {
                "user_turn": self.turn,
                "tools": list(request.tools_dict),
                "loaded": LOADED.findall(system),
            }
        )
        if not self.script:
            yield LlmResponse(content=Content(role="model", parts=[Part(text="done")]))
            return
        calls = self.script.pop(0)
        number = len(self.requests)
        parts = [
            Part(function_call=FunctionCall(id=f"call-{number}-{i}", name=name, args=args))
            for i, (name, args) in enumerate(calls)
        ]
        yield LlmResponse(content=Content(role="model", parts=parts))


async def converse(spec: dict[str, Any], repository: FsSkillRepository) -> dict[str, Any]:
    model = ScriptedModel()
    agent = LlmAgent(
        name="",
        model=model,
        skill_repository=repository,
        tools=[
            SkillToolSetWithDynamicTools(repository=repository),
            DynamicSkillToolSet(
                repository,
                available_tools=[stub_tool(name) for name in spec["pool"]],
                only_active_skills=spec.get("only_active_skills", True),
            ),
        ],
    )
    service = InMemorySessionService()
    runner = Runner(app_name="oracle", agent=agent, session_service=service)
    await service.create_session(app_name="oracle", user_id="user", session_id=spec["id"])
    responses = []
    for turn, script in enumerate(spec["user_turns"]):
        model.turn, model.script = turn, [list(calls) for calls in script]
        agent_context = AgentContext()
        config = copy.deepcopy(DEFAULT_SKILL_CONFIG)
        config["skill_processor"]["load_mode"] = spec["load_mode"]
        set_skill_config(agent_context, config)
        message = Content(role="user", parts=[Part(text=f"message {turn}")])
        async for event in runner.run_async(
            user_id="user", session_id=spec["id"], new_message=message, agent_context=agent_context
        ):
            for part in event.content.parts if event.content and event.content.parts else []:
                if part.function_response:
                    response = part.function_response
                    responses.append(
                        {"name": response.name, "response": jsonable(response.response)}
                    )
    return {"requests": model.requests, "responses": responses}


async def main() -> None:
    logging.disable(logging.CRITICAL)
    spec = json.load(sys.stdin)
    repository = FsSkillRepository(*spec["roots"], enable_hot_reload=False)
    output = {}
    for conversation in spec["conversations"]:
        output[conversation["id"]] = await converse(conversation, repository)
    json.dump(output, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    asyncio.run(main())
