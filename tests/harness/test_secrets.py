"""Secrets stay hidden: URL credentials and tokens, API keys echoed by an upstream, secret
values in failure messages, short secret values; the one masking helper behind them all."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (imported once here, not again by every pytester run)
import pytest

from pytest_agent_skills.errors import ConfigurationError
from pytest_agent_skills.harness import (
    ModelError,
    Reply,
    RunSettings,
    ScriptedBackend,
    Upstream,
    run_conversation,
)
from pytest_agent_skills.redaction import Redactor, mask_url, mask_urls, url_secrets
from pytest_agent_skills.repository import SkillRepository
from tests.support.harness import SKILLS, scripted_upstream
from tests.support.pytester_runs import run_scenarios
from tests.support.workspace import make_skill

REPOSITORY = SkillRepository([SKILLS])
API_KEY = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("https://user:hunter2@host/x.zip", "https://***@host/x.zip"),
        ("https://ghp_tokenvalue@github.com/o/r.zip", "https://***@github.com/o/r.zip"),
        ("https://u:p/w?d@host:8443/x", "https://***@host:8443/x"),
        (
            "https://h/v1?access_token=t1&page=2&api-key=k2&key=k3&sig=s4#top",
            "https://h/v1?access_token=***&page=2&api-key=***&key=***&sig=***#top",
        ),
        (
            "https://b.s3.amazonaws.com/x.zip?X-Amz-Credential=c&X-Amz-Signature=s&x=1",
            "https://b.s3.amazonaws.com/x.zip?X-Amz-Credential=***&X-Amz-Signature=***&x=1",
        ),
        ("https://h/x.zip?token=", "https://h/x.zip?token=***"),
        ("https://h/plain/path.zip?version=2", "https://h/plain/path.zip?version=2"),
        ("/local/path?token=x", "/local/path?token=x"),
    ],
)
def test_mask_url_hides_userinfo_and_secret_query_values(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_url_secrets_are_the_password_or_lone_token_and_secret_query_values() -> None:
    assert url_secrets("https://user:pa%40ss@h/x?api_key=k%2By&page=2") == [
        "pa%40ss",
        "k%2By",
        "pa@ss",
        "k+y",
    ]
    assert url_secrets("https://tok-abc@h/x") == ["tok-abc"]
    assert url_secrets("https://h/x?page=2") == []


def test_urls_inside_a_message_are_masked() -> None:
    assert mask_urls("failed for url 'https://a:b@h/x?token=t': refused") == (
        "failed for url 'https://***@h/x?token=***': refused"
    )


def test_any_configured_secret_is_redacted_however_short() -> None:
    redactor = Redactor(["PIN"], environ={"PIN": "7q"}, extra_values=["x"])
    assert redactor.redact_text("pin 7q, box") == "pin <redacted:PIN>, bo<redacted>"
    assert redactor.redact({"a": ["7q"]}) == {"a": ["<redacted:PIN>"]}
    assert Redactor(["EMPTY"], environ={"EMPTY": ""}).secrets == []


def test_credentials_in_the_upstream_url_are_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Upstream("https://me:hunter2@api.example.com/v1", API_KEY)
    assert str(caught.value) == (
        "the upstream URL https://***@api.example.com/v1 holds credentials (user:password@ before"
        " the host), which would be sent as HTTP Basic auth instead of the API key. Remove them"
        " from the URL and put the key in the environment variable named by"
        " skills_upstream_key_env (default OPENAI_API_KEY)."
    )


def test_pytest_refuses_credentials_in_the_upstream_url_before_any_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_x(): pass")
    result = run_scenarios(pytester, "--skills-upstream-url=https://me:hunter2@127.0.0.1:9/v1"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: the upstream URL https://***@127.0.0.1:9/v1 holds credentials (user:password@*"]
    )
    assert "hunter2" not in result.stdout.str() + result.stderr.str()


class KeyEchoingBackend(ScriptedBackend):
    """An upstream whose error page quotes the Authorization header it was sent."""

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        return Reply({"error": f"invalid key: {headers['Authorization']}"}, 401)


def test_a_secret_query_value_of_the_upstream_is_masked_in_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "tape.json"
    with scripted_upstream([{"say": "Hi."}]) as upstream:
        options = RunSettings(
            record_mode="once", upstream=Upstream(f"{upstream.base_url}?api-key=q-secret-77")
        )
        run_conversation(REPOSITORY, "Hello.", cassette=cassette, settings=options)
    text = cassette.read_text()
    assert "q-secret-77" not in text
    url = json.loads(text)["interactions"][0]["request"]["url"]
    assert url == f"{upstream.base_url}/chat/completions?api-key=***"


def test_an_upstream_error_echoing_the_key_is_redacted(tmp_path: Path) -> None:
    cassette = tmp_path / "tape.json"
    with (
        scripted_upstream([{"say": "Hi."}], KeyEchoingBackend) as upstream,
        pytest.raises(ModelError) as caught,
    ):
        options = RunSettings(record_mode="once", upstream=Upstream(upstream.base_url, API_KEY))
        run_conversation(REPOSITORY, "Hello.", cassette=cassette, settings=options)
    assert str(caught.value) == (
        f"recording {cassette}: upstream {upstream.base_url}/chat/completions answered HTTP 401:"
        ' {"error": "invalid key: Bearer <redacted>"}'
    )


@pytest.mark.parametrize("key", [API_KEY, "k9x"], ids=["long", "short"])
def test_a_pytest_failure_never_shows_the_key_an_upstream_echoes(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", key)
    suite.makepyfile(
        test_tape="""
        def test_tape(skill_agent):
            skill_agent.run("Hi.", skills="skills", cassette="tapes/hi.json")
        """
    )
    with scripted_upstream([{"say": "Hi."}], KeyEchoingBackend) as upstream:
        result = run_scenarios(
            suite, "--skills-record=once", f"--skills-upstream-url={upstream.base_url}"
        )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ['*answered HTTP 401: {"error": "invalid key: Bearer <redacted:OPENAI_API_KEY>"}*']
    )
    assert key not in result.stdout.str()


def test_a_trajectory_in_a_failure_shows_no_secret_value(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123-secret")
    suite.makepyfile(
        test_agent="""
        import os

        def test_token(skill_agent):
            skill_agent.run(
                "Count.",
                skills="skills",
                env={"TOKEN": os.environ["MY_SERVICE_TOKEN"]},
                script=[
                    {"call": "skill_run", "args": {"skill": "notes", "command": "echo t=$TOKEN"}},
                    {"say": "done"},
                ],
                expect={"final": "finished"},
            )
        """
    )
    result = run_scenarios(suite, "-o", "skills_redact_env=MY_SERVICE_TOKEN")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*t=<redacted:MY_SERVICE_TOKEN>*"])
    assert "tok-0123-secret" not in result.stdout.str()


def test_a_url_roots_secrets_are_masked_in_the_header_and_errors(
    pytester: pytest.Pytester,
) -> None:
    with socket.socket() as closed:  # a port nothing listens on: the download is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://me:hunter2@127.0.0.1:{port}/s.zip?access_token=tok-77"
    pytester.makepyfile("def test_x(): pass")
    result = run_scenarios(pytester, f"--skills-root={url}")
    shown = f"http://***@127.0.0.1:{port}/s.zip?access_token=***"
    result.stdout.fnmatch_lines([f"agent-skills: skills_roots=[[]{shown}[]]*"])
    result.stderr.fnmatch_lines([f"ERROR: command line: {shown}: download failed: *"])
    output = result.stdout.str() + result.stderr.str()
    assert "hunter2" not in output and "tok-77" not in output


@pytest.mark.parametrize("token", ["tok-0123-secret", "q7z"], ids=["long", "short"])
def test_a_workspace_failure_report_shows_no_secret_value(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", token)
    make_skill(pytester.path / "skills")
    pytester.makepyfile(
        """
        import os

        def test_fails(skill_workspace):
            ws = skill_workspace("demo")
            ws.run("echo token=$T", env={"T": os.environ["MY_SERVICE_TOKEN"]})
            assert False
        """
    )
    result = run_scenarios(
        pytester, "-o", "skills_roots=skills", "-o", "skills_redact_env=MY_SERVICE_TOKEN"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["--- stdout ---", "token=<redacted:MY_SERVICE_TOKEN>"])
    assert token not in result.stdout.str()
