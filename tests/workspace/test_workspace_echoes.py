"""What a model sends is echoed in an error message as a short, marked excerpt, never whole:
a session id, a skill name, a path, an environment variable name or an output pattern of a
million characters makes a message of a few hundred."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.excerpt import excerpt
from pytest_agent_skills.protocol import SkillSession
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import Workspace, WorkspaceError, create_runtime
from pytest_agent_skills.workspace.interactive import UnknownSessionError
from tests.support.protocol import call_error, example_repository
from tests.support.workspace import make_skill

MILLION = 1_000_000
HUGE = "a" * MILLION
SHOWN = "'" + "a" * 200 + "…' (1,000,000 characters)"


def test_an_excerpt_is_the_text_when_short_and_marked_when_cut() -> None:
    assert excerpt("abc") == "'abc'"
    assert excerpt("abc", quoted=False) == "abc"
    assert excerpt(HUGE) == SHOWN
    assert excerpt("x" * 200, quoted=False) == "x" * 200
    assert excerpt("x" * 201, quoted=False) == "x" * 200 + "… (201 characters)"
    assert excerpt("it's" * 20, 8) == '"it\'sit\'s…" (80 characters)'
    assert excerpt("\n" * 100, 2) == "'\\n\\n…' (100 characters)"
    assert excerpt(10**100, 5) == "10000… (101 characters)"
    assert excerpt(None) == "None"


def test_an_unknown_session_id_of_a_million_characters_is_cut() -> None:
    session = SkillSession(example_repository(), exec_tools=True)
    for tool in ("skill_poll_session", "skill_write_stdin", "skill_kill_session"):
        call_error(
            session,
            tool,
            {"session_id": HUGE},
            "unknown_session",
            f"unknown session_id: {'a' * 200}… (1,000,000 characters). Sessions: (none); start"
            " one with skill_exec (a killed session is gone).",
        )


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    runtime = create_runtime("local", work_root=tmp_path / "ws")
    with runtime, runtime.create_workspace("echoes") as opened:
        yield opened


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    return make_skill(tmp_path / "skills")


def test_the_workspace_cuts_every_echo_of_what_it_refuses(
    workspace: Workspace, skill: Skill
) -> None:
    with pytest.raises(UnknownSessionError) as unknown:
        workspace.exec_sessions.get(HUGE)
    assert str(unknown.value) == f"unknown session_id: {'a' * 200}… (1,000,000 characters)"
    refusals = {
        "skill name": lambda: workspace.run(HUGE, "true"),
        "cwd": lambda: workspace.run(skill, "true", cwd="/" + HUGE),
        "env name": lambda: workspace.run(skill, "true", env={"=" + HUGE: "x"}),
        "input name": lambda: workspace.put_inputs({"/" + HUGE: "x"}),
        "output pattern": lambda: workspace.run(skill, "true", output_files=["\0" + HUGE]),
        "timeout": lambda: workspace.run(skill, "true", timeout=10**MILLION // 10**999_000),
    }
    messages = {}
    for what, refused in refusals.items():
        with pytest.raises(WorkspaceError) as raised:
            refused()
        messages[what] = str(raised.value)
        assert len(messages[what]) < 900, (what, messages[what][:300])
    assert messages["skill name"].startswith(f"skill {SHOWN} is not staged in this workspace")
    assert messages["cwd"].startswith(f"cwd '/{'a' * 199}…' (1,000,001 characters) resolves to")
    assert messages["env name"] == (
        f"invalid environment variable name '={'a' * 199}…' (1,000,001 characters) in env"
    )
    assert messages["input name"] == (
        f"input name '/{'a' * 199}…' (1,000,001 characters) must name a file inside work/inputs"
        " (a relative path without '..')"
    )
    assert messages["output pattern"] == (
        f"output_files pattern '\\x00{'a' * 199}…' (1,000,001 characters) must not contain NUL"
        " bytes"
    )
    assert messages["timeout"].startswith(
        "timeout must be at most 86400 seconds (one day), got 10000"
    )
    assert messages["timeout"].endswith("… (1,001 characters)")
