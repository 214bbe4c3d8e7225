"""`agent-skills validate URL`: the skills of a served archive, or a rejected one's typed error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.support.sources import loopback_only, skill_md, skills_tree, zip_bytes


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)


def validate(url: str, cache_dir: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_agent_skills.cli", "validate", url]
    environ = dict(os.environ, SKILLS_CACHE_DIR=str(cache_dir))
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=60)


def test_validate_reports_the_skills_of_an_archive_url(httpserver: HTTPServer, tmp_path: Path):
    httpserver.expect_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("a", "b")))
    run = validate(httpserver.url_for("/skills.zip"), tmp_path / "cache")
    assert run.returncode == 0, run.stderr
    assert "2 skill(s) checked: 0 error(s)" in run.stdout


def test_validate_fails_with_the_typed_error_of_a_rejected_archive(
    httpserver: HTTPServer, tmp_path: Path
):
    body = zip_bytes({"ok/SKILL.md": skill_md("ok"), "../evil": b"x"})
    httpserver.expect_request("/bad.zip").respond_with_data(body)
    url = httpserver.url_for("/bad.zip")
    run = validate(url, tmp_path / "cache")
    assert run.returncode != 0
    assert run.stderr.splitlines()[-1].endswith(
        f"{url}: entry '../evil' escapes the archive root (path traversal)"
    )
    assert os.listdir(tmp_path / "cache") == [".locks"]


def test_validate_unpacks_a_local_archive_and_reads_a_skill_md_in_place(tmp_path: Path) -> None:
    archive = tmp_path / "skills.zip"
    archive.write_bytes(zip_bytes(skills_tree("a", "b")))
    run = validate(str(archive), tmp_path / "cache")
    assert run.returncode == 0, run.stderr
    assert "2 skill(s) checked: 0 error(s)" in run.stdout
    skill = tmp_path / "c" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_bytes(skill_md("c"))
    run = validate(str(skill), tmp_path / "cache")
    assert run.returncode == 0, run.stderr
    assert "1 skill(s) checked: 0 error(s)" in run.stdout
    # One cache entry, the archive's: the SKILL.md was read where it is.
    assert len([name for name in os.listdir(tmp_path / "cache") if name != ".locks"]) == 1
