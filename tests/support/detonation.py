"""The detonation run for the tests: started once per runtime, the audit corpus listed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_agent_skills.audit.detonation import Detonator, start_dynamic
from pytest_agent_skills.audit.seam import DynamicOptions, DynamicUnavailableError
from tests.support.services import missing_service

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "audit"


def corpus(kind: str) -> list[Path]:
    """The skill folders of ``malicious`` or ``benign``."""
    return sorted(path for path in (CORPUS / kind).iterdir() if path.is_dir())


def expectation(skill: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(skill.with_name(skill.name + ".expect.json").read_text())
    return data


def runtime_only(kind: str = "malicious") -> list[Path]:
    """The skills of ``kind`` the detonation run must catch (``dynamic`` rules expected)."""
    return [skill for skill in corpus(kind) if expectation(skill).get("dynamic")]


def started(runtime: str, cassettes: Path | None = None) -> Iterator[Detonator]:
    """A started detonation run in ``runtime`` (a missing runtime skips, or fails where the
    services are required), closed after."""
    try:
        analysis = start_dynamic(DynamicOptions(runtime=runtime, cassettes=cassettes))
    except DynamicUnavailableError as error:
        missing_service(f"the {runtime} runtime for detonation runs: {error}")
    assert isinstance(analysis, Detonator)
    try:
        yield analysis
    finally:
        analysis.close()
