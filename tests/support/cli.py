"""The ``agent-skills`` program as the tests run it: ``main`` in this process, or ``validate`` as
a process of its own, as a user or a pre-commit hook starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_agent_skills.cli import main


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The exit status, standard output and standard error of ``agent-skills ARGS``."""
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def validate_process(
    *arguments: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``agent-skills validate ARGUMENTS`` as its own process: none of the caller's ``SKILLS_*``
    variables (``env`` adds some), UTF-8 output whatever the machine's locale."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SKILLS_")}
    environment.update(LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "validate", *arguments],
        cwd=cwd, env=environment, capture_output=True, check=False, timeout=300,
    )


def failing_report(*arguments: str, cwd: Path) -> bytes:
    """The report of ``validate_process(ARGUMENTS)`` on skills with errors: it exits 1 and
    writes nothing on standard error."""
    done = validate_process(*arguments, cwd=cwd)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    assert done.stderr == b""
    return done.stdout


def named_document(text: str, name: str) -> dict[str, Any]:
    """The JSON document ``text``, checked to name the schema ``name`` in its ``$schema`` and to
    be what the shipped schema describes; returned without ``$schema``."""
    from pytest_agent_skills.evals.documents.catalog import schema_file

    document: dict[str, Any] = json.loads(text)
    assert document["$schema"] == f"pytest-agent-skills:schemas/{name}.schema.json"
    jsonschema.validate(document, json.loads(schema_file(name).read_text(encoding="utf-8")))
    del document["$schema"]
    return document
