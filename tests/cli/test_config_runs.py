"""The run settings built from a configuration without pytest: what ``agent-skills`` and the
pytest items both run conversations with."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agent_skills.config.file_settings import FileSettings
from pytest_agent_skills.config.runs import run_settings
from pytest_agent_skills.errors import ConfigurationError
from pytest_agent_skills.harness import RunSettings
from pytest_agent_skills.settings import ConfigFile


def values(options: dict[str, object], flags: dict[str, object] | None = None) -> FileSettings:
    return FileSettings(ConfigFile(Path("pytest.ini"), options), flags, environ={})


def test_the_defaults_are_the_run_settings_defaults() -> None:
    built = run_settings(values({}), environ={})
    assert built == RunSettings()


def test_a_configured_upstream_and_its_key_from_the_environment() -> None:
    configured = values(
        {
            "skills_upstream_url": "https://models.example/v1",
            "skills_upstream_key_env": "MY_KEY",
            "skills_redact_env": "OTHER_SECRET",
            "skills_record": "new",
            "skills_transport": "sdk-stream",
            "skills_load_mode": "session",
        },
        flags={"skills_upstream_timeout": 30.0},
    )
    built = run_settings(configured, environ={"MY_KEY": "sk-live-123"})
    assert built.upstream is not None
    assert (built.upstream.base_url, built.upstream.api_key) == (
        "https://models.example/v1",
        "sk-live-123",
    )
    assert built.upstream.total_timeout == 30.0
    assert (built.record_mode, built.transport, built.load_mode) == ("new", "sdk-stream", "session")
    assert built.secret_env == ("MY_KEY", "OPENAI_API_KEY", "OTHER_SECRET")
    assert built.redactor().redact_text("key sk-live-123") == "key <redacted>"


def test_a_bad_limit_names_where_it_was_set() -> None:
    configured = values(
        {"skills_upstream_url": "https://models.example/v1", "skills_upstream_max_bytes": "0"}
    )
    with pytest.raises(ConfigurationError, match=r"pytest.ini: skills_upstream_max_bytes"):
        run_settings(configured, environ={})


def test_the_runtime_options_of_the_settings(tmp_path: Path) -> None:
    from pytest_agent_skills.config.runtimes import RuntimeOptions, runtime_options

    assert runtime_options(values({})) == RuntimeOptions()
    configured = values(
        {
            "skills_runtime": "sandbox",
            "skills_work_root": str(tmp_path),
            "skills_runtime_missing": "skip",
            "skills_keep_workspaces": "true",
        }
    )
    options = runtime_options(configured)
    assert (options.default, options.work_root, options.skip_missing, options.keep_workspaces) == (
        "sandbox",
        tmp_path,
        True,
        True,
    )
    with options.create("local") as runtime, runtime.create_workspace("made") as workspace:
        assert workspace.path.is_relative_to(tmp_path)
