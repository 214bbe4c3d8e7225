"""Tool-definition payload with and without dynamic tool exposure, for a 50-tool pool.

Ten generated skills each declare five tools in their ``Tools:`` section; the pool holds
those 50 tools, each with a realistic description and three parameters.  The script prints,
for each stage of a conversation, the JSON bytes of the ``tools`` sent to the model and an
estimated token count (bytes / 4, the usual rule of thumb for English JSON; no tokenizer is
needed), and the saving against sending the whole pool.  The reference claims 85-95%.

    python bench/protocol.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from pytest_agent_skills.protocol import SkillSession, ToolPool
from pytest_agent_skills.repository import SkillRepository

SKILLS = 10
TOOLS_PER_SKILL = 5
BYTES_PER_TOKEN = 4
USER = {"role": "user", "content": "What is the weather in Paris?"}


def tool_name(skill: int, tool: int) -> str:
    return f"domain{skill}_action{tool}"


def write_skills(root: Path) -> None:
    for skill in range(SKILLS):
        folder = root / f"domain-{skill}"
        folder.mkdir(parents=True)
        tools = "\n".join(f"- {tool_name(skill, tool)}" for tool in range(TOOLS_PER_SKILL))
        folder.joinpath("SKILL.md").write_text(
            f"---\nname: domain-{skill}\ndescription: Tools for business domain {skill}.\n---\n\n"
            f"Tools:\n{tools}\n\nOverview\n\nUse these tools for domain {skill} questions.\n"
        )


def build_pool() -> ToolPool:
    pool = ToolPool()
    for skill in range(SKILLS):
        for tool in range(TOOLS_PER_SKILL):
            name = tool_name(skill, tool)
            pool.stub(
                name,
                f"Performs action {tool} of business domain {skill}: looks up the records that"
                " match the query, applies the requested filters and returns the matching items"
                " with their identifiers, titles and last-modified dates.",
                {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Free-text search query."},
                        "limit": {
                            "type": "integer",
                            "description": "Maximum number of items to return (1-100).",
                        },
                        "sort": {
                            "type": "string",
                            "enum": ["relevance", "date", "title"],
                            "description": "Sort order of the results.",
                        },
                    },
                    "required": ["query"],
                },
                {"items": []},
            )
    return pool


def payload(tools: list[dict]) -> int:
    return len(json.dumps(tools, separators=(",", ":")).encode()) if tools else 0


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        write_skills(Path(scratch))
        repository = SkillRepository([scratch])
        pool = build_pool()
        assert len(pool) == SKILLS * TOOLS_PER_SKILL

        static = SkillSession(repository, tool_pool=pool)
        dynamic = SkillSession(repository, tool_pool=pool, dynamic_tools=True)
        skill_tools_static = payload(static.tool_definitions()) - payload(pool.definitions())
        pool_bytes = payload(pool.definitions())

        stages: list[tuple[str, list[dict], list[dict]]] = []
        dynamic.build_request([USER])

        def stage(label: str) -> None:
            request = dynamic.build_request(
                [USER, {"role": "tool", "tool_call_id": "x", "content": "{}"}]
            )
            exposed_pool = [t for t in request.tools if t["function"]["name"] in pool]
            stages.append((label, request.tools, exposed_pool))

        stage("nothing loaded")
        dynamic.call("skill_load", {"skill_name": "domain-3"})
        stage("1 skill loaded (5 tools)")
        dynamic.call(
            "skill_select_tools",
            {"skill_name": "domain-3", "tools": [tool_name(3, 0), tool_name(3, 1)]},
        )
        stage("after skill_select_tools (2 tools)")
        dynamic.call("skill_load", {"skill_name": "domain-7"})
        stage("2nd skill loaded (+5 tools)")

        print(
            f"pool: {len(pool)} tools, {pool_bytes} bytes, ~{pool_bytes // BYTES_PER_TOKEN} tokens"
            f" ({pool_bytes / len(pool):.0f} bytes, ~{pool_bytes / len(pool) / BYTES_PER_TOKEN:.0f}"
            " tokens per tool)"
        )
        skill_tools_dynamic = payload(stages[0][1])
        print(
            f"skill_* tools: {skill_tools_static} bytes (5, static session),"
            f" {skill_tools_dynamic} bytes (7, dynamic session)"
        )
        print()
        header = f"{'stage':38} {'pool tools':>10} {'pool bytes':>10} {'saving':>8}"
        header += f" {'all bytes':>10} {'~tokens':>8} {'saving':>8}"
        print(header)
        static_total = payload(static.tool_definitions())
        print(
            f"{'static (whole pool, no dynamic)':38} {len(pool):>10} {pool_bytes:>10} {'-':>8}"
            f" {static_total:>10} {static_total // BYTES_PER_TOKEN:>8} {'-':>8}"
        )
        for label, tools, exposed in stages:
            exposed_bytes = payload(exposed)
            total = payload(tools)
            pool_saving = 100 * (1 - exposed_bytes / pool_bytes)
            total_saving = 100 * (1 - total / static_total)
            print(
                f"{label:38} {len(exposed):>10} {exposed_bytes:>10} {pool_saving:>7.1f}%"
                f" {total:>10} {total // BYTES_PER_TOKEN:>8} {total_saving:>7.1f}%"
            )
        print()
        print(
            "saving = 1 - dynamic / static; 'all' includes the skill_* tools on both sides"
            " (dynamic exposure adds skill_list_tools and skill_select_tools)."
        )
        print("reference claim: 85-95% of tool-definition tokens saved")


if __name__ == "__main__":
    main()
