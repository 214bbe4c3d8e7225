"""Shared pieces of the protocol tests: the example skills and small generated ones."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from pytest_agent_skills.protocol import SkillSession, ToolOutcome
from pytest_agent_skills.repository import SkillRepository

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SKILLS = REPO_ROOT / "skills"

WEATHER_TOOLS = ["get_current_weather", "get_weather_forecast", "search_city_by_name"]

#: Skills generated per test (kept out of tests/ so skill collection does not validate them).
GENERATED_SKILLS: dict[str, dict[str, str]] = {
    "maps-tools": {
        "SKILL.md": """\
            ---
            name: maps-tools
            description: Map lookups for routes and places.
            ---

            Tools:
            - find_route
            - find_place

            Overview

            Files live in __BASE_DIR__/data; see __BASE_DIR__/docs/guide.md.
            """,
        "docs/guide.md": "# Guide\n\nRead __BASE_DIR__/data/places.txt.\n",
        "docs/more/deep.txt": "deep doc\n",
        "scripts/route.sh": '#!/bin/bash\necho route "$@"\n',
    },
    "plain-notes": {
        "SKILL.md": """\
            ---
            name: plain-notes
            description: Notes without tools or docs, body mentions __BASE_DIR__ only in text.
            ---

            # Plain notes

            Nothing to run.
            """,
    },
}


def write_skills(root: Path, skills: dict[str, dict[str, str]] = GENERATED_SKILLS) -> Path:
    for name, files in skills.items():
        for relative, text in files.items():
            path = root / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def example_repository() -> SkillRepository:
    return SkillRepository([EXAMPLE_SKILLS])


def content(outcome: ToolOutcome) -> Any:
    """The tool message content as the model reads it."""
    return json.loads(outcome.content())


def call_ok(session: SkillSession, name: str, arguments: dict[str, Any] | str) -> ToolOutcome:
    outcome = session.call(name, arguments)
    assert not outcome.is_error, outcome.result
    return outcome


def call_error(
    session: SkillSession, name: str, arguments: dict[str, Any] | str, code: str, message: str
) -> ToolOutcome:
    """Call, expect an error result with exactly this code and message, and no state change."""
    before = session.state
    outcome = session.call(name, arguments)
    assert outcome.is_error, outcome.result
    assert outcome.result == {"error": code, "message": message, "status": "failed"}
    assert outcome.state_delta == {}
    assert session.state == before
    return outcome
