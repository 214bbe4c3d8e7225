"""Shared pieces of the workspace tests: runtimes (skipped when absent, never in CI) and skills."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.skill import Skill
from pytest_agent_skills.workspace import (
    RUNTIME_NAMES,
    Runtime,
    RuntimeUnavailableError,
    Workspace,
    create_runtime,
)
from tests.support.services import missing_service

_RUNTIMES: dict[str, Runtime | str] = {}


#: The local runtime without namespaces: what a machine without root or user namespaces gets.
LOCAL_PROCESS_GROUP = "local-process-group"


def _create(kind: str, work_root: Path, stage_mode: str) -> Runtime:
    if kind == LOCAL_PROCESS_GROUP:
        from pytest_agent_skills.workspace.local import LocalRuntime

        return LocalRuntime(work_root=work_root, isolate=False, stage_mode=stage_mode)
    return create_runtime(kind, work_root=work_root, stage_mode=stage_mode)


def get_runtime(kind: str, work_root: Path, stage_mode: str = "link") -> Runtime:
    """One runtime per kind and stage mode for the session; skip (or fail in CI) when its
    engine is missing."""
    key = kind if stage_mode == "link" else f"{kind} ({stage_mode} staging)"
    if key not in _RUNTIMES:
        try:
            _RUNTIMES[key] = _create(kind, work_root, stage_mode)
        except RuntimeUnavailableError as error:
            _RUNTIMES[key] = str(error)
    runtime = _RUNTIMES[key]
    if isinstance(runtime, str):
        missing_service(f"runtime {kind!r} unavailable: {runtime}")
    return runtime


@pytest.fixture(scope="session")
def work_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspaces")


RUNTIME_PARAMS = [
    pytest.param("local"),
    pytest.param("sandbox", marks=pytest.mark.sandbox),
    pytest.param("docker", marks=pytest.mark.docker),
]
assert [param.values[0] for param in RUNTIME_PARAMS] == list(RUNTIME_NAMES)


#: Every runtime, and the local runtime in each of its process modes.
ISOLATION_PARAMS = [
    RUNTIME_PARAMS[0],
    pytest.param(LOCAL_PROCESS_GROUP),
    *RUNTIME_PARAMS[1:],
]


@pytest.fixture(params=RUNTIME_PARAMS, scope="session")
def runtime(request: pytest.FixtureRequest, work_root: Path) -> Iterator[Runtime]:
    yield get_runtime(request.param, work_root)


@pytest.fixture(params=ISOLATION_PARAMS, scope="session")
def any_runtime(request: pytest.FixtureRequest, work_root: Path) -> Iterator[Runtime]:
    yield get_runtime(request.param, work_root)


@pytest.fixture
def workspace(runtime: Runtime, request: pytest.FixtureRequest) -> Iterator[Workspace]:
    with runtime.create_workspace(request.node.name) as opened:
        yield opened


def make_skill(
    root: Path, name: str = "demo", files: dict[str, str | bytes] | None = None
) -> Skill:
    """Write a skill folder with a SKILL.md and ``files``; return it loaded."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(
        textwrap.dedent(
            f"""\
            ---
            name: {name}
            description: A test skill.
            ---
            Run scripts/hello.sh NAME.
            """
        )
    )
    all_files: dict[str, str | bytes] = {"scripts/hello.sh": 'echo "hello $1"\n', **(files or {})}
    for relative, content in all_files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return Skill.load(directory)


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    return make_skill(tmp_path / "skills")
