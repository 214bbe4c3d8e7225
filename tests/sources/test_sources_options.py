"""pytest settings of URL roots: --skills-cache-dir / SKILLS_CACHE_DIR, the download timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.support.sources import skills_tree, zip_bytes

pytestmark = pytest.mark.usefixtures("loopback_only")

INNER_TEST = """
import os
from pathlib import Path
from pytest_agent_skills.sources import resolve_root
from pytest_agent_skills.sources.options import current_options

def test_resolve(tmp_path):
    root = resolve_root(os.environ["SKILLS_TEST_URL"])
    print("ROOT", root.parent)
    limits = current_options().limits
    print("TIMEOUT", limits.read_timeout, limits.connect_timeout)
"""


@pytest.fixture
def url(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> str:
    httpserver.expect_request("/skills.zip").respond_with_data(zip_bytes(skills_tree("alpha")))
    address = httpserver.url_for("/skills.zip")
    monkeypatch.setenv("SKILLS_TEST_URL", address)
    return address


def test_the_cache_dir_flag_decides_where_url_roots_go(pytester: pytest.Pytester, url: str):
    pytester.makepyfile(test_inner=INNER_TEST)
    result = pytester.runpytest(
        "-s", "--skills-cache-dir", "flag-cache", "--skills-download-timeout", "2.5"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*ROOT {pytester.path / 'flag-cache'}", "TIMEOUT 2.5 2.5"])


def test_the_environment_variable_beats_the_ini_option(
    pytester: pytest.Pytester, url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("SKILLS_CACHE_DIR", str(tmp_path / "env-cache"))
    pytester.makeini("[pytest]\nskills_cache_dir = ini-cache\n")
    pytester.makepyfile(test_inner=INNER_TEST)
    result = pytester.runpytest("-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*ROOT {tmp_path / 'env-cache'}", "TIMEOUT 30.0 30.0"])


def test_the_environment_variable_sets_the_cache_dir(
    pytester: pytest.Pytester, url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("SKILLS_CACHE_DIR", str(tmp_path / "env-cache"))
    pytester.makepyfile(test_inner=INNER_TEST)
    result = pytester.runpytest("-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*ROOT {tmp_path / 'env-cache'}"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "0",
            "command line: --skills-download-timeout must be a positive number of seconds, at"
            " most 3600, got 0.0",
        ),
        (
            "inf",
            "command line: --skills-download-timeout must be a positive number of seconds, at"
            " most 3600, got inf",
        ),
        ("soon", "command line: --skills-download-timeout needs a number, got 'soon'"),
    ],
)
def test_a_bad_timeout_is_a_usage_error(pytester: pytest.Pytester, value: str, message: str):
    pytester.makepyfile(test_inner="def test_nothing(): pass\n")
    result = pytester.runpytest("--skills-download-timeout", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: " + message])


def test_a_bad_timeout_names_the_variable_or_the_file_it_came_from(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    pytester.makepyfile(test_inner="def test_nothing(): pass\n")
    pytester.makeini("[pytest]\nskills_download_timeout = 0\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: {pytester.path / 'tox.ini'}: skills_download_timeout:"
            " --skills-download-timeout must be a positive number of seconds, at most 3600,"
            " got 0.0"
        ]
    )
    monkeypatch.setenv("SKILLS_DOWNLOAD_TIMEOUT", "-1")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: environment variable SKILLS_DOWNLOAD_TIMEOUT: --skills-download-timeout must"
            " be a positive number of seconds, at most 3600, got -1.0"
        ]
    )
