"""http(s) skill roots against loopback servers the tests start: formats, cache, every failure."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.sources import (
    ArchiveRejectedError,
    CorruptArchiveError,
    DownloadError,
    DownloadStatusError,
    DownloadTimeoutError,
    DownloadTooLargeError,
    Limits,
    RedirectLimitError,
    SourceOptions,
    UnsupportedRootError,
    resolve_root,
)
from pytest_agent_skills.sources.cache import LOCKS_DIR
from tests.support.sources import (
    dripping,
    endless,
    raw_server,
    skill_md,
    skills_tree,
    tar_bytes,
    zip_bytes,
)

pytestmark = pytest.mark.usefixtures("loopback_only")

MIB = 1024 * 1024


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "fresh" / "cache"


@pytest.fixture
def options(cache_dir: Path) -> SourceOptions:
    return SourceOptions(cache_dir=cache_dir)


def cache_contents(cache_dir: Path) -> list[str]:
    """What the cache holds besides its lock files."""
    if not cache_dir.exists():
        return []
    return sorted(name for name in os.listdir(cache_dir) if name != LOCKS_DIR)


def skill_names(root: Path) -> list[str]:
    return SkillRepository([root]).names()


SERVED = [
    ("/skills.zip", zip_bytes(skills_tree("alpha", "beta", prefix="repo/")), ["alpha", "beta"]),
    ("/skills.tar", tar_bytes(skills_tree("alpha", "beta")), ["alpha", "beta"]),
    ("/skills.tar.gz", tar_bytes(skills_tree("gamma"), compressed=True), ["gamma"]),
    ("/skills.tgz", tar_bytes(skills_tree("delta", "eps"), compressed=True), ["delta", "eps"]),
    ("/weather/SKILL.md", skill_md("weather"), ["weather"]),
    ("/latest", zip_bytes(skills_tree("sniffed-zip")), ["sniffed-zip"]),
    ("/latest", tar_bytes(skills_tree("sniffed-tar")), ["sniffed-tar"]),
    ("/latest", tar_bytes(skills_tree("sniffed-gz"), compressed=True), ["sniffed-gz"]),
    ("/raw?path=x", skill_md("sniffed-md"), ["sniffed-md"]),
]


@pytest.mark.parametrize(
    ("path", "body", "skills"), SERVED, ids=[f"{path}-{skills[0]}" for path, _, skills in SERVED]
)
def test_each_format_is_downloaded_unpacked_and_cached(
    httpserver: HTTPServer, options: SourceOptions, path: str, body: bytes, skills: list[str]
):
    url_path, _, query = path.partition("?")
    httpserver.expect_request(url_path, query_string=query or None).respond_with_data(body)
    url = httpserver.url_for(path)

    root = resolve_root(url, options=options)

    assert skill_names(root) == skills
    assert (root / ".ready").is_file()
    assert root.parent == options.cache_dir
    assert cache_contents(options.cache_dir) == [root.name]


def test_a_cached_url_is_used_without_any_request(httpserver: HTTPServer, options: SourceOptions):
    httpserver.expect_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("alpha")))
    url = httpserver.url_for("/skills.zip")
    first = resolve_root(url, options=options)
    second = resolve_root(url, options=options)
    assert first == second
    assert len(httpserver.log) == 1
    assert skill_names(second) == ["alpha"]


REFRESH_SCRIPT = """
import sys
from pathlib import Path
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.sources import SourceOptions, resolve_root
options = SourceOptions(cache_dir=Path(sys.argv[2]))
for _ in range(2):
    root = resolve_root(sys.argv[1], refresh=True, options=options)
print(",".join(SkillRepository([root]).names()))
"""


def test_refresh_downloads_again_once_per_process(httpserver: HTTPServer, options: SourceOptions):
    url = httpserver.url_for("/skills.zip")
    httpserver.expect_ordered_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("v1")))
    httpserver.expect_ordered_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("v2")))
    assert skill_names(resolve_root(url, options=options)) == ["v1"]

    run = subprocess.run(
        [sys.executable, "-c", REFRESH_SCRIPT, url, str(options.cache_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "v2"
    assert len(httpserver.log) == 2
    assert skill_names(resolve_root(url, options=options)) == ["v2"]
    assert len(cache_contents(options.cache_dir)) == 1


def test_the_default_cache_dir_comes_from_the_environment(
    httpserver: HTTPServer, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SKILLS_CACHE_DIR", str(cache_dir))
    httpserver.expect_request("/SKILL.md").respond_with_data(skill_md("env-cache"))
    root = resolve_root(httpserver.url_for("/SKILL.md"))
    assert root.parent == cache_dir
    assert skill_names(root) == ["env-cache"]


def test_a_404_is_a_typed_error_and_leaves_nothing(httpserver: HTTPServer, options: SourceOptions):
    httpserver.expect_request("/missing.zip").respond_with_data("no", status=404)
    url = httpserver.url_for("/missing.zip")
    with pytest.raises(DownloadStatusError) as caught:
        resolve_root(url, options=options)
    assert str(caught.value) == (
        f"{url}: download failed with HTTP 404 NOT FOUND; check that the URL is right and reachable"
    )
    assert caught.value.status == 404
    assert cache_contents(options.cache_dir) == []


def test_a_password_or_token_in_the_url_is_hidden_in_errors(
    httpserver: HTTPServer, options: SourceOptions
):
    httpserver.expect_request("/missing.zip").respond_with_data("no", status=404)
    url = httpserver.url_for("/missing.zip?page=2&access_token=tok-9").replace(
        "http://", "http://user:s3cret@"
    )
    with pytest.raises(DownloadStatusError) as caught:
        resolve_root(url, options=options)
    shown = httpserver.url_for("/missing.zip?page=2&access_token=***").replace(
        "http://", "http://***@"
    )
    assert str(caught.value).startswith(f"{shown}: download failed")
    assert "s3cret" not in str(caught.value) and "tok-9" not in str(caught.value)


def test_the_cache_never_writes_a_urls_password_or_token(
    httpserver: HTTPServer, options: SourceOptions
):
    httpserver.expect_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("alpha")))
    url = httpserver.url_for("/skills.zip?sig=sig-9").replace("http://", "http://user:s3cret@")
    root = resolve_root(url, options=options)
    assert skill_names(root) == ["alpha"]
    written = b"".join(path.read_bytes() for path in options.cache_dir.rglob("*") if path.is_file())
    assert b"s3cret" not in written and b"sig-9" not in written


def test_a_redirect_loop_stops_at_the_redirect_limit(
    httpserver: HTTPServer, options: SourceOptions
):
    httpserver.expect_request("/a.zip").respond_with_data(
        "", status=302, headers={"Location": "/b.zip"}
    )
    httpserver.expect_request("/b.zip").respond_with_data(
        "", status=302, headers={"Location": "/a.zip"}
    )
    url = httpserver.url_for("/a.zip")
    limits = Limits(max_redirects=4)
    with pytest.raises(RedirectLimitError) as caught:
        resolve_root(url, options=SourceOptions(options.cache_dir, limits))
    assert str(caught.value) == (
        f"{url}: more than 4 redirects (a redirect loop?); link to the final address of the archive"
    )
    assert len(httpserver.log) == 5
    assert cache_contents(options.cache_dir) == []


def test_redirects_within_the_limit_are_followed(httpserver: HTTPServer, options: SourceOptions):
    httpserver.expect_request("/latest").respond_with_data(
        "", status=301, headers={"Location": "/v2.tgz"}
    )
    httpserver.expect_request("/v2.tgz").respond_with_data(
        tar_bytes(skills_tree("moved"), compressed=True)
    )
    assert skill_names(resolve_root(httpserver.url_for("/latest"), options=options)) == ["moved"]


def test_a_redirect_off_http_is_refused(httpserver: HTTPServer, options: SourceOptions):
    httpserver.expect_request("/skills.zip").respond_with_data(
        "", status=302, headers={"Location": "file:///etc/passwd"}
    )
    url = httpserver.url_for("/skills.zip")
    with pytest.raises(DownloadError) as caught:
        resolve_root(url, options=options)
    assert str(caught.value).startswith(f"{url}: download failed: ")
    assert "unsupported protocol" in str(caught.value).lower()
    assert cache_contents(options.cache_dir) == []


def test_a_content_length_over_the_limit_is_refused_before_reading(
    httpserver: HTTPServer, options: SourceOptions
):
    httpserver.expect_request("/big.zip").respond_with_data(b"\0" * 5000)
    url = httpserver.url_for("/big.zip")
    limits = Limits(max_download_bytes=4096)
    with pytest.raises(DownloadTooLargeError) as caught:
        resolve_root(url, options=SourceOptions(options.cache_dir, limits))
    assert str(caught.value) == (
        f"{url}: the server announces 5000 bytes (Content-Length), over the download limit of 4096"
        " bytes; publish a smaller archive"
    )
    assert cache_contents(options.cache_dir) == []


def test_a_body_without_length_is_cut_off_at_the_default_64_mib(options: SourceOptions):
    sent: list[int] = []
    head = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
    with raw_server(endless(head, b"\0" * MIB, sent)) as base:
        url = f"{base}/skills.zip"
        with pytest.raises(DownloadTooLargeError) as caught:
            resolve_root(url, options=options)
    assert str(caught.value) == (
        f"{url}: the body is over the download limit of {64 * MIB} bytes (cut off while streaming);"
        " publish a smaller archive"
    )
    assert 64 * MIB <= sent[0] < 256 * MIB
    assert cache_contents(options.cache_dir) == []


def test_a_lying_content_length_is_not_trusted(options: SourceOptions):
    archive = zip_bytes(skills_tree("liar"))

    def liar(connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + archive + b"\0" * MIB
        )

    with raw_server(liar) as base:
        url = f"{base}/skills.zip"
        with pytest.raises(CorruptArchiveError, match=r"the archive is corrupt or truncated"):
            resolve_root(url, options=options)
    assert cache_contents(options.cache_dir) == []


def test_a_body_shorter_than_announced_is_a_download_error(options: SourceOptions):
    def short(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"PK\x03\x04")

    with raw_server(short) as base:
        url = f"{base}/skills.zip"
        with pytest.raises(
            DownloadError, match=r"^http://127\.0\.0\.1:\d+/skills\.zip: download failed"
        ):
            resolve_root(url, options=options)
    assert cache_contents(options.cache_dir) == []


def test_a_server_that_stalls_hits_the_read_timeout(options: SourceOptions):
    def stall(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\nPK\x03\x04")
        time.sleep(1.0)

    limits = Limits(read_timeout=0.2)
    with raw_server(stall) as base:
        url = f"{base}/skills.zip"
        started = time.monotonic()
        with pytest.raises(DownloadTimeoutError) as caught:
            resolve_root(url, options=SourceOptions(options.cache_dir, limits))
        waited = time.monotonic() - started
    assert str(caught.value) == (
        f"{url}: the server sent nothing for 0.2 s (read timeout); raise skills_download_timeout"
        " if the server is just slow"
    )
    assert waited < 1.0
    assert cache_contents(options.cache_dir) == []


@pytest.mark.parametrize(
    "head",
    [b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\nPK\x03\x04", b"HTTP/1.1 200 OK\r\nX-Slow: "],
    ids=["body", "headers"],
)
def test_a_server_that_drips_bytes_hits_the_total_timeout_on_the_clock(
    options: SourceOptions, head: bytes
):
    """One byte every 0.5 s never trips the 30 s read timeout; the 2 s total must still hold."""
    limits = Limits(total_timeout=2.0)
    with raw_server(dripping(head)) as base:
        url = f"{base}/skills.zip"
        started = time.monotonic()
        with pytest.raises(DownloadTimeoutError) as caught:
            resolve_root(url, options=SourceOptions(options.cache_dir, limits))
        waited = time.monotonic() - started
    assert str(caught.value) == f"{url}: the download took longer than 2 s in total"
    assert waited < 15, f"cut off after {waited:.1f} s, not at the 2 s total timeout"
    assert cache_contents(options.cache_dir) == []


def test_a_refused_connection_is_a_download_error(options: SourceOptions):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/skills.zip"
    with pytest.raises(
        DownloadError, match=r"^http://127\.0\.0\.1:\d+/skills\.zip: download failed: "
    ):
        resolve_root(url, options=options)


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("http://127.0.0.1:abc/skills.zip", "port: 'abc'"),
        ("http://127.0.0.1:1/skills\x01.zip", "'\\x01'"),
    ],
)
def test_a_url_httpx_refuses_is_a_download_error(url: str, detail: str, options: SourceOptions):
    with pytest.raises(DownloadError) as caught:
        resolve_root(url, options=options)
    # The reason is httpx's own wording; what matters is the type, the prefix and the culprit.
    assert str(caught.value).startswith(f"{url}: download failed: ")
    assert detail in str(caught.value)
    assert cache_contents(options.cache_dir) == []


def test_a_hostile_archive_over_http_names_the_url_and_entry(
    httpserver: HTTPServer, options: SourceOptions
):
    body = zip_bytes({"ok/SKILL.md": skill_md("ok"), "../evil": b"x"})
    httpserver.expect_request("/skills.zip").respond_with_data(body)
    url = httpserver.url_for("/skills.zip")
    with pytest.raises(ArchiveRejectedError) as caught:
        resolve_root(url, options=options)
    assert str(caught.value) == f"{url}: entry '../evil' escapes the archive root (path traversal)"
    assert cache_contents(options.cache_dir) == []
    assert not (options.cache_dir.parent / "evil").exists()


def test_a_file_that_is_no_archive_is_unsupported(httpserver: HTTPServer, options: SourceOptions):
    httpserver.expect_request("/latest").respond_with_data("<html>login</html>")
    url = httpserver.url_for("/latest")
    with pytest.raises(UnsupportedRootError) as caught:
        resolve_root(url, options=options)
    assert str(caught.value) == (
        f"{url}: the downloaded file is neither a zip, a tar, a gzip-compressed tar nor a SKILL.md"
        " (it starts with b'<html>login</htm'); link to a .zip, .tar, .tar.gz, .tgz or SKILL.md"
    )
    assert cache_contents(options.cache_dir) == []
