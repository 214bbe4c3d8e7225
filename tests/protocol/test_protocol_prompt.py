"""The assembled request at every step: system text, messages and tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agent_skills.protocol import SkillSession, ToolPool
from pytest_agent_skills.protocol.prompt import GUIDANCE_HEADER, OVERVIEW_HEADER
from pytest_agent_skills.repository import SkillRepository
from tests.support.protocol import WEATHER_TOOLS, call_ok, example_repository, write_skills

GUIDANCE = """\
Tooling and workspace guidance:
- The skill summaries above are routing summaries only. Before using a skill, load it with \
skill_load; do not infer commands or file layouts from the summary alone.
- Loading a skill adds its SKILL.md to your context; it does not run anything.
- Use skill_list_docs and skill_select_docs to load only the docs you need; avoid include_all_docs \
unless the task needs the whole doc set.
- skill_run runs a command with the skill folder as working directory, inside an isolated \
workspace. Invoke scripts through an interpreter and a path (python3 scripts/foo.py).
- Read inputs from $WORK_DIR/inputs and do not modify them; write results under $OUTPUT_DIR and \
collect them with output_files globs (out/*.txt).
- Prefer $WORK_DIR, $OUTPUT_DIR, $RUN_DIR and $WORKSPACE_DIR over hard-coded paths.
- Do not rerun a command when you already have its result; answer instead.
"""
DYNAMIC_LINE = (
    "- Loading a skill offers you the tools it declares; use skill_list_tools to see them and"
    " skill_select_tools to keep only those the task needs.\n"
)
OVERVIEW = """\
Available skills:
- maps-tools: Map lookups for routes and places.
- plain-notes: Notes without tools or docs, body mentions __BASE_DIR__ only in text.

"""
USER = {"role": "user", "content": "Find a route to the station."}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_skills(tmp_path / "skills")


@pytest.fixture
def pool() -> ToolPool:
    pool = ToolPool()
    for name in ("find_route", "find_place"):
        pool.stub(name, f"stub {name}", {"type": "object", "properties": {}}, {"ok": name})
    return pool


@pytest.fixture
def session(root: Path, pool: ToolPool) -> SkillSession:
    return SkillSession(SkillRepository([root]), dynamic_tools=True, tool_pool=pool)


def maps_block(root: Path, docs: str, doc_text: str, tools: str) -> str:
    base = (root / "maps-tools").resolve()
    return (
        "\n[Loaded] maps-tools\n\n\nTools:\n- find_route\n- find_place\n\nOverview\n\n"
        f"Files live in {base}/data; see {base}/docs/guide.md.\n\n"
        f"Docs loaded: {docs}\n{doc_text}Tools selected: {tools}\n"
    )


def test_first_request_holds_overview_and_guidance_only(session):
    request = session.build_request([USER])
    assert request.system == OVERVIEW + GUIDANCE + DYNAMIC_LINE
    assert request.messages == [{"role": "system", "content": request.system}, USER]
    assert request.loaded_skills == []
    assert request.tool_names == [
        "skill_load",
        "skill_run",
        "skill_list",
        "skill_list_docs",
        "skill_select_docs",
        "skill_list_tools",
        "skill_select_tools",
    ]


def test_guidance_names_only_tools_that_exist(root):
    system = SkillSession(SkillRepository([root])).build_request([USER]).system
    assert system == OVERVIEW + GUIDANCE
    assert "skill_list_skills" not in system
    assert "skill_select_tools" not in system
    assert '."' not in system


def test_request_after_each_step(session, root):
    messages = [USER]
    overview = OVERVIEW + GUIDANCE + DYNAMIC_LINE
    call_ok(session, "skill_load", {"skill_name": "maps-tools"})
    request = session.build_request(messages)
    assert request.system == overview + "\n\n" + maps_block(
        root, "none", "", "find_route, find_place"
    )
    assert request.tool_names[-2:] == ["find_route", "find_place"]
    assert request.loaded_skills == ["maps-tools"]

    call_ok(session, "skill_select_docs", {"skill_name": "maps-tools", "docs": ["docs/guide.md"]})
    places = (root / "maps-tools").resolve() / "data/places.txt"
    guide = f"\n[Doc] docs/guide.md\n\n# Guide\n\nRead {places}.\n\n"
    request = session.build_request(messages)
    assert request.system == overview + "\n\n" + maps_block(
        root, "docs/guide.md", guide, "find_route, find_place"
    )

    call_ok(session, "skill_select_tools", {"skill_name": "maps-tools", "tools": ["find_place"]})
    request = session.build_request(messages)
    assert request.system == overview + "\n\n" + maps_block(
        root, "docs/guide.md", guide, "find_place"
    )
    assert request.tool_names[-1] == "find_place"
    assert "find_route" not in request.tool_names

    call_ok(session, "skill_select_tools", {"skill_name": "maps-tools", "mode": "clear"})
    call_ok(session, "skill_select_docs", {"skill_name": "maps-tools", "mode": "clear"})
    request = session.build_request(messages)
    assert request.system == overview + "\n\n" + maps_block(root, "none", "", "none")
    assert request.tool_names[-1] == "skill_select_tools"


def test_all_docs_expand_to_docs_and_scripts_in_path_order(session, root):
    call_ok(session, "skill_load", {"skill_name": "maps-tools", "include_all_docs": True})
    system = session.build_request([USER]).system
    assert "Docs loaded: docs/guide.md, docs/more/deep.txt, scripts/route.sh\n" in system
    positions = [
        system.index(f"[Doc] {path}\n")
        for path in ("docs/guide.md", "docs/more/deep.txt", "scripts/route.sh")
    ]
    assert positions == sorted(positions)
    assert '\n[Doc] scripts/route.sh\n\n#!/bin/bash\necho route "$@"\n\n' in system


def test_base_dir_is_replaced_in_body_and_docs_not_in_descriptions(session, root):
    call_ok(session, "skill_load", {"skill_name": "maps-tools", "include_all_docs": True})
    call_ok(session, "skill_load", {"skill_name": "plain-notes"})
    system = session.build_request([USER]).system
    assert "- plain-notes: Notes without tools or docs, body mentions __BASE_DIR__ only" in system
    assert system.count("__BASE_DIR__") == 1
    assert f"Read {(root / 'maps-tools').resolve()}/data/places.txt." in system


def test_loaded_skills_appear_sorted_by_name_not_load_order(session):
    call_ok(session, "skill_load", {"skill_name": "plain-notes"})
    call_ok(session, "skill_load", {"skill_name": "maps-tools"})
    system = session.build_request([USER]).system
    assert system.index("[Loaded] maps-tools") < system.index("[Loaded] plain-notes")
    assert system.endswith(
        "\n[Loaded] plain-notes\n\n\n# Plain notes\n\nNothing to run.\n\n"
        "Docs loaded: none\nTools selected: none\n"
    )


def test_instruction_and_leading_system_message_come_first(root):
    session = SkillSession(SkillRepository([root]), instruction="You are terse.")
    request = session.build_request([{"role": "system", "content": "Answer in French."}, USER])
    assert request.system.startswith("You are terse.\n\nAnswer in French.\n\nAvailable skills:\n")
    assert request.messages[0] == {"role": "system", "content": request.system}
    assert request.messages[1:] == [USER]


def test_empty_repository_gives_no_overview(tmp_path):
    session = SkillSession(SkillRepository([tmp_path]), instruction="Base.")
    assert session.build_request([USER]).system == "Base."


def test_request_is_deterministic(session):
    call_ok(session, "skill_load", {"skill_name": "maps-tools", "include_all_docs": True})
    first = session.build_request([USER])
    assert session.build_request([USER]) == first


def test_openai_kwargs_are_deep_copies(session):
    request = session.build_request([USER])
    kwargs = request.to_openai_kwargs()
    assert kwargs == {"messages": request.messages, "tools": request.tools}
    kwargs["messages"][0]["content"] = "changed"
    kwargs["tools"][0]["function"]["name"] = "changed"
    assert request.messages[0]["content"] != "changed"
    assert request.tool_names[0] == "skill_load"


def test_example_skills_overview_lists_every_skill_once():
    repository = example_repository()
    system = SkillSession(repository).build_request([USER]).system
    overview = system.split("\n\n", 1)[0].splitlines()
    assert overview[0] == OVERVIEW_HEADER
    assert overview[1:] == [f"- {s.name}: {s.description}" for s in repository.summaries()]
    assert f"\n\n{GUIDANCE_HEADER}\n" in system


def test_example_weather_skill_loaded_block():
    repository = example_repository()
    pool = ToolPool()
    for name in WEATHER_TOOLS:
        pool.stub(name, name, {"type": "object", "properties": {}}, {})
    session = SkillSession(repository, dynamic_tools=True, tool_pool=pool)
    call_ok(
        session, "skill_load", {"skill_name": "weather-tools", "docs": ["docs/API_REFERENCE.md"]}
    )
    system = session.build_request([USER]).system
    skill = repository.get("weather-tools")
    reference = (skill.directory / "docs/API_REFERENCE.md").read_text()
    assert system.endswith(
        f"\n[Loaded] weather-tools\n\n{skill.body}\n"
        f"Docs loaded: docs/API_REFERENCE.md\n\n[Doc] docs/API_REFERENCE.md\n\n{reference}\n"
        f"Tools selected: {', '.join(WEATHER_TOOLS)}\n"
    )


def test_the_openai_client_sends_exactly_the_assembled_request(session, httpserver):
    from openai import OpenAI

    call_ok(session, "skill_load", {"skill_name": "maps-tools"})
    request = session.build_request([USER])
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "done"},
                }
            ],
        }
    )
    client = OpenAI(base_url=httpserver.url_for("/v1"), api_key="test-key", max_retries=0)
    reply = client.chat.completions.create(model="test-model", **request.to_openai_kwargs())
    assert reply.choices[0].message.content == "done"
    ((sent, _response),) = httpserver.log
    body = json.loads(sent.get_data())
    assert body == {"model": "test-model", **request.to_openai_kwargs()}


def test_a_doc_that_is_not_utf8_is_named_not_decoded(session, root):
    (root / "maps-tools/docs/latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    call_ok(session, "skill_load", {"skill_name": "maps-tools", "docs": ["docs/latin1.txt"]})
    system = session.build_request([USER]).system
    assert "\n[Doc] docs/latin1.txt\n\n(not shown: docs/latin1.txt is not UTF-8 text)\n" in system


def test_example_docs_skill_request_at_every_step():
    repository = example_repository()
    session = SkillSession(repository)
    skill = repository.get("release-notes")
    docs = {path: (skill.directory / path).read_text() for path in skill.docs}
    checklist, style = sorted(docs)

    def expected(selected: list[str]) -> str:
        shown = "".join(f"\n[Doc] {path}\n\n{docs[path]}\n" for path in sorted(selected))
        listing = ", ".join(selected) if selected else "none"
        return (
            f"\n[Loaded] release-notes\n\n{skill.body}\nDocs loaded: {listing}\n{shown}"
            "Tools selected: none\n"
        )

    base = session.build_request([USER]).system
    assert "[Loaded]" not in base
    steps = [
        ("skill_load", {"skill_name": "release-notes"}, []),
        ("skill_select_docs", {"skill_name": "release-notes", "docs": [style]}, [style]),
        (
            "skill_select_docs",
            {"skill_name": "release-notes", "docs": [checklist], "mode": "add"},
            [style, checklist],
        ),
        (
            "skill_select_docs",
            {"skill_name": "release-notes", "include_all_docs": True},
            [checklist, style],
        ),
        ("skill_select_docs", {"skill_name": "release-notes", "mode": "clear"}, []),
    ]
    for name, arguments, selected in steps:
        call_ok(session, name, arguments)
        request = session.build_request([USER])
        assert request.system == base + "\n\n" + expected(selected), arguments
        assert request.loaded_skills == ["release-notes"]


def test_carriage_returns_in_docs_and_body_are_line_ends_in_the_prompt(tmp_path):
    """CRLF, a lone CR and a mix of them all reach the model as \\n, as the reference reads
    the files (universal newlines); the files themselves are left as they are."""
    skill = tmp_path / "skills" / "cr-notes"
    (skill / "docs").mkdir(parents=True)
    (skill / "SKILL.md").write_bytes(
        b"---\r\nname: cr-notes\r\ndescription: CR line ends.\r\n---\r\nOne.\rTwo.\r\n"
    )
    (skill / "docs" / "crlf.md").write_bytes(b"a\r\nb\r\n")
    (skill / "docs" / "cr.md").write_bytes(b"a\rb\r")
    (skill / "docs" / "mixed.md").write_bytes(b"a\r\nb\rc\n\r")
    session = SkillSession(SkillRepository([tmp_path / "skills"]))
    call_ok(session, "skill_load", {"skill_name": "cr-notes", "include_all_docs": True})
    system = session.build_request([USER]).system
    assert "\r" not in system
    assert system.endswith(
        "\n[Loaded] cr-notes\n\nOne.\nTwo.\n\n"
        "Docs loaded: docs/cr.md, docs/crlf.md, docs/mixed.md\n"
        "\n[Doc] docs/cr.md\n\na\nb\n\n"
        "\n[Doc] docs/crlf.md\n\na\nb\n\n"
        "\n[Doc] docs/mixed.md\n\na\nb\nc\n\n\n"
        "Tools selected: none\n"
    )
    assert (skill / "docs" / "mixed.md").read_bytes() == b"a\r\nb\rc\n\r"
