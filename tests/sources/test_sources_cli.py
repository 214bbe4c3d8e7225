"""`agent-skills validate URL`: the skills of a served archive, or a rejected one's typed error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.support.cli import validate_process
from tests.support.sources import skill_md, skills_tree, zip_bytes

pytestmark = pytest.mark.usefixtures("loopback_only")


@pytest.fixture
def cache_env(tmp_path: Path) -> dict[str, str]:
    return {"SKILLS_CACHE_DIR": str(tmp_path / "cache")}


def test_validate_reports_the_skills_of_an_archive_url(
    httpserver: HTTPServer, cache_env: dict[str, str]
) -> None:
    httpserver.expect_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("a", "b")))
    run = validate_process(httpserver.url_for("/skills.zip"), env=cache_env)
    assert run.returncode == 0, run.stderr.decode()
    assert "2 skill(s) checked: 0 error(s)" in run.stdout.decode()


def test_validate_fails_with_the_typed_error_of_a_rejected_archive(
    httpserver: HTTPServer, tmp_path: Path, cache_env: dict[str, str]
) -> None:
    body = zip_bytes({"ok/SKILL.md": skill_md("ok"), "../evil": b"x"})
    httpserver.expect_request("/bad.zip").respond_with_data(body)
    url = httpserver.url_for("/bad.zip")
    run = validate_process(url, env=cache_env)
    assert run.returncode != 0
    assert run.stderr.decode().splitlines()[-1].endswith(
        f"{url}: entry '../evil' escapes the archive root (path traversal)"
    )
    assert os.listdir(tmp_path / "cache") == [".locks"]


def test_validate_unpacks_a_local_archive_and_reads_a_skill_md_in_place(
    tmp_path: Path, cache_env: dict[str, str]
) -> None:
    archive = tmp_path / "skills.zip"
    archive.write_bytes(zip_bytes(skills_tree("a", "b")))
    run = validate_process(str(archive), env=cache_env)
    assert run.returncode == 0, run.stderr.decode()
    assert "2 skill(s) checked: 0 error(s)" in run.stdout.decode()
    skill = tmp_path / "c" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_bytes(skill_md("c"))
    run = validate_process(str(skill), env=cache_env)
    assert run.returncode == 0, run.stderr.decode()
    assert "1 skill(s) checked: 0 error(s)" in run.stdout.decode()
    # One cache entry, the archive's: the SKILL.md was read where it is.
    assert len([name for name in os.listdir(tmp_path / "cache") if name != ".locks"]) == 1
