"""The URL-root cache: its location, incomplete entries, leftovers, concurrent processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pytest_agent_skills.sources import CacheError, SourceOptions, resolve_root
from pytest_agent_skills.sources.cache import LOCKS_DIR, default_cache_dir, entry_name
from tests.support.sources import skills_tree, tree, zip_bytes

pytestmark = pytest.mark.usefixtures("loopback_only")


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"SKILLS_CACHE_DIR": "/srv/cache", "XDG_CACHE_HOME": "/xdg"}, "/srv/cache"),
        ({"XDG_CACHE_HOME": "/xdg"}, "/xdg/pytest-agent-skills/skills"),
        ({"XDG_CACHE_HOME": "relative/xdg"}, "{home}/.cache/pytest-agent-skills/skills"),
        ({}, "{home}/.cache/pytest-agent-skills/skills"),
    ],
)
@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the XDG rules apply on Linux/Unix")
def test_the_cache_location_follows_skills_cache_dir_then_xdg(
    environ: dict[str, str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir(environ) == Path(expected.format(home=tmp_path))


@pytest.fixture
def served(httpserver: HTTPServer) -> str:
    httpserver.expect_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("alpha")))
    return httpserver.url_for("/skills.zip")


def test_an_entry_without_ready_marker_is_never_used_and_is_rebuilt(
    served: str, tmp_path: Path, httpserver: HTTPServer
):
    cache_dir = tmp_path / "cache"
    half_written = cache_dir / entry_name(served)
    (half_written / "alpha").mkdir(parents=True)
    (half_written / "alpha" / "partial.txt").write_text("interrupted")

    root = resolve_root(served, options=SourceOptions(cache_dir=cache_dir))

    assert root == half_written
    assert sorted(tree(root)) == [".ready", "alpha/SKILL.md", "alpha/scripts/run.sh"]
    assert len(httpserver.log) == 1


def test_leftover_temporary_folders_of_a_killed_fill_are_removed(served: str, tmp_path: Path):
    cache_dir = tmp_path / "cache"
    leftover = cache_dir / f".tmp-{entry_name(served)}"
    (leftover / "download").mkdir(parents=True)
    root = resolve_root(served, options=SourceOptions(cache_dir=cache_dir))
    assert sorted(os.listdir(cache_dir)) == [LOCKS_DIR, root.name]


def test_an_unwritable_cache_location_is_a_typed_error(served: str, tmp_path: Path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(CacheError) as caught:
        resolve_root(served, options=SourceOptions(cache_dir=blocker / "cache"))
    assert str(caught.value).startswith(f"{served}: cannot create the cache folder {blocker}/cache")
    assert str(caught.value).endswith("; set SKILLS_CACHE_DIR to a writable folder")


def test_a_lock_file_that_cannot_be_opened_is_a_typed_error(served: str, tmp_path: Path):
    cache_dir = tmp_path / "cache"
    lock = cache_dir / LOCKS_DIR / f"{entry_name(served)}.lock"
    lock.mkdir(parents=True)  # a folder where the lock file should be
    with pytest.raises(CacheError) as caught:
        resolve_root(served, options=SourceOptions(cache_dir=cache_dir))
    assert str(caught.value) == (
        f"{served}: cannot lock the cache entry with {lock} (Is a directory);"
        " set SKILLS_CACHE_DIR to a writable folder"
    )


FETCH_SCRIPT = """
import json, sys, time
from pathlib import Path
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.sources import SourceOptions, resolve_root
started = time.time()
root = resolve_root(sys.argv[1], options=SourceOptions(cache_dir=Path(sys.argv[2])))
finished = time.time()
files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
names = SkillRepository([root]).names()
print(json.dumps({"root": str(root), "names": names, "files": files,
                  "started": started, "finished": finished}))
"""


@pytest.fixture
def slow_threaded_server() -> Iterator[HTTPServer]:
    """A server that answers concurrent requests, each after a pause, so fills overlap."""
    server = HTTPServer(threaded=True)
    body = zip_bytes(skills_tree("alpha", "beta", "gamma"))

    def slowly(request: Request) -> Response:
        time.sleep(1.0)
        return Response(body)

    server.expect_request("/skills.zip").respond_with_handler(slowly)
    server.start()
    try:
        yield server
    finally:
        server.clear()
        server.stop()


def test_eight_processes_fetching_one_url_leave_one_intact_copy(
    slow_threaded_server: HTTPServer, tmp_path: Path
):
    url = slow_threaded_server.url_for("/skills.zip")
    cache_dir = tmp_path / "cache"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", FETCH_SCRIPT, url, str(cache_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    reports = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        reports.append(json.loads(out))

    assert max(r["started"] for r in reports) < min(r["finished"] for r in reports), (
        "the 8 processes did not overlap"
    )
    assert {r["root"] for r in reports} == {str(cache_dir / entry_name(url))}
    assert all(r["names"] == ["alpha", "beta", "gamma"] for r in reports)
    assert all(r["files"] == reports[0]["files"] for r in reports)
    assert sorted(os.listdir(cache_dir)) == [LOCKS_DIR, entry_name(url)]
    assert len(slow_threaded_server.log) == 1
