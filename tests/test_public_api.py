"""The package's public names resolve, and loading the plugin imports no heavy dependency."""

import subprocess
import sys

import pytest

import pytest_agent_skills


@pytest.mark.parametrize("name", pytest_agent_skills.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(pytest_agent_skills, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        pytest_agent_skills.nope  # noqa: B018


def printed_by_fresh_python(probe: str) -> str:
    """What ``probe`` prints in a new interpreter, where no test has imported anything yet."""
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_loading_the_plugin_imports_no_sdk_or_http_stack() -> None:
    probe = (
        "import sys, pytest_agent_skills.plugin;"
        "heavy = ['openai', 'docker', 'httpx', 'werkzeug', 'jsonschema'];"
        "print(','.join(name for name in heavy if name in sys.modules))"
    )
    assert printed_by_fresh_python(probe) == ""


def test_version_is_the_installed_distribution_version() -> None:
    # __version__ is what reports (e.g. SARIF's tool version) show; it must match pyproject.toml.
    from importlib.metadata import version

    assert pytest_agent_skills.__version__ == version("pytest-agent-skills")


def test_the_collection_glue_loads_no_rule_module_before_a_check_runs() -> None:
    probe = (
        "import sys, pytest_agent_skills.glue.skills_collection;"
        "prefix = 'pytest_agent_skills.rules.';"
        "print(' '.join(sorted(n[len(prefix):] for n in sys.modules if n.startswith(prefix))))"
    )
    assert printed_by_fresh_python(probe) == "_catalogue _options"
