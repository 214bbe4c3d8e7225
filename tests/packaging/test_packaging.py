"""The distribution: the sdist and the wheel build from this checkout, pass `twine check`,
install into a fresh virtualenv offline (the wheel file, plus dependencies already installed
here), and carry what an installed package needs (the schemas, the rule docs of `agent-skills
rule`, the pytest entry point and the console script) and what a packager needs (the licence,
the changelog, the docs and the tests); the release workflow builds, checks and publishes with
PyPI's trusted publishing; the version is written once."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agent_skills import __version__
from tests.support.skill_files import write_skill

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGED = (
    "pytest_agent_skills/schemas/scenario.schema.json",
    "pytest_agent_skills/schemas/audit.schema.json",
    "pytest_agent_skills/schemas/tokens.schema.json",
    "pytest_agent_skills/schemas/coverage.schema.json",
    "pytest_agent_skills/schemas/benchmark.schema.json",
    "pytest_agent_skills/schemas/cassette.schema.json",
    "pytest_agent_skills/rules/rules.md",
    "pytest_agent_skills/evals/report/report.css",
    "pytest_agent_skills/evals/report/report.js",
    "pytest_agent_skills/evals/suite/grader_gold.json",
    "pytest_agent_skills/schemas/grader-check.schema.json",
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build`` (the sdist, then the wheel from the sdist), offline: no isolation."""
    source = tmp_path_factory.mktemp("source")
    # A copy of the tracked files, so that no build output lands in the checkout.
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout.decode().split("\0")
    for name in filter(None, tracked):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        original = REPO_ROOT / name
        if original.is_symlink():
            target.symlink_to(os.readlink(original))
        elif original.is_file():
            shutil.copy2(original, target)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


#: What a packager needs from the sdist beside the package: the licence, the changelog, the docs,
#: and the tests with what they read (fixtures, the example suite, skills, bench scripts).
FOR_PACKAGERS = (
    "LICENSE",
    "CHANGELOG.md",
    "README.md",
    "pyproject.toml",
    "noxfile.py",
    "docs/rules.md",
    "docs/architecture.md",
    "tests/conftest.py",
    "tests/packaging/test_packaging.py",
    "tests/fixtures/harness/skills/notes/SKILL.md",
    "tests/support/skill_files.py",
    "example_suite/pyproject.toml",
    "skills/csv-summary/SKILL.md",
    "bench/scenario.py",
    "scripts/test.sh",
)


def test_the_sdist_carries_the_docs_the_schema_and_the_rule_docs(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    prefix = f"pytest_agent_skills-{__version__}/"
    with tarfile.open(sdist) as archive:
        members = {member.name: member for member in archive.getmembers()}
        for name in (*PACKAGED, *FOR_PACKAGERS):
            assert prefix + name in members, name
        assert not [name for name in members if "__pycache__" in name or name.endswith(".pyc")]
        rules = members[prefix + "pytest_agent_skills/rules/rules.md"]
        assert rules.isfile()  # the text itself, not the checkout's link
        text = archive.extractfile(rules).read().decode()  # type: ignore[union-attr]
    assert text == (REPO_ROOT / "docs" / "rules.md").read_text(encoding="utf-8")


def test_the_wheel_carries_the_schema_the_rule_docs_and_the_entry_points(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in (*PACKAGED, "pytest_agent_skills/py.typed"):
            assert name in names, name
        entry_points = archive.read(
            f"pytest_agent_skills-{__version__}.dist-info/entry_points.txt"
        ).decode()
        metadata = archive.read(f"pytest_agent_skills-{__version__}.dist-info/METADATA").decode()
        licence = archive.read(f"pytest_agent_skills-{__version__}.dist-info/licenses/LICENSE")
    assert "[pytest11]\nagent_skills = pytest_agent_skills.plugin" in entry_points
    assert "agent-skills = pytest_agent_skills.cli:main" in entry_points
    assert "\nLicense-Expression: Apache-2.0\n" in metadata
    assert licence == (REPO_ROOT / "LICENSE").read_bytes()


def test_twine_accepts_the_sdist_and_the_wheel(dist: Path) -> None:
    """What the release workflow runs before it publishes (twine is a test extra)."""
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed offline (``--no-index``: no index, no network).
    Its dependencies are those this interpreter has installed, reached through a path file, as
    ``--system-site-packages`` would reach them but without this checkout's own (editable)
    install, whose import hook a path file does not run: only the wheel's copy of the package
    can be imported. ``--no-deps``, since pip would look for the dependencies on an index;
    :func:`test_the_installed_wheel_finds_every_dependency_it_declares` checks instead that
    each one the wheel declares is met by what the virtualenv sees."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "_already_installed.pth").write_text("\n".join(sorted(here)) + "\n")
    (wheel,) = dist.glob("*.whl")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", str(wheel)],
        check=True, timeout=300, env={**outside_env(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    return venv


def outside_env() -> dict[str, str]:
    """This environment without PYTHONPATH: a checkout on it (as when the suite runs a
    checkout under another interpreter) would shadow the installed wheel."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def in_venv(venv: Path, *command: str, cwd: Path) -> str:
    """``command`` run with the virtualenv first on PATH, in ``cwd`` (away from the checkout,
    whose package would otherwise shadow the installed one)."""
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**outside_env(), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_installed_wheel_is_used_and_reads_its_data(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import pytest_agent_skills, importlib.resources as r;"
        "print(pytest_agent_skills.__file__);"
        "from pytest_agent_skills.scenario import scenario_schema;"
        "print(scenario_schema()['$schema'])"
    )
    python = str(installed / "bin" / "python")
    location, schema = in_venv(installed, python, "-c", probe, cwd=tmp_path).split()
    assert Path(location).is_relative_to(installed)  # not the checkout
    assert schema.startswith("https://json-schema.org/")
    version = in_venv(installed, "agent-skills", "--version", cwd=tmp_path)
    assert version == f"agent-skills {__version__}\n"
    rule = in_venv(installed, "agent-skills", "rule", "name-charset", cwd=tmp_path)
    assert "How to fix: use the suggestion" in rule
    write_skill(tmp_path / "skills", "good")
    report = in_venv(installed, python, "-m", "pytest", "-p", "no:cacheprovider", cwd=tmp_path)
    assert "1 passed" in report, report  # one item per skill


def test_the_installed_wheel_finds_every_dependency_it_declares(
    installed: Path, tmp_path: Path
) -> None:
    probe = (
        "import importlib.metadata as m\n"
        "from packaging.requirements import Requirement\n"
        "for line in m.requires('pytest-agent-skills') or []:\n"
        "    wanted = Requirement(line)\n"
        "    if wanted.marker and not wanted.marker.evaluate({'extra': ''}):\n"
        "        continue\n"
        "    found = m.version(wanted.name)\n"
        "    print(wanted.name, found, found in wanted.specifier)\n"
    )
    python = str(installed / "bin" / "python")
    lines = in_venv(installed, python, "-c", probe, cwd=tmp_path).splitlines()
    assert {line.split()[0] for line in lines} >= {"pytest", "pydantic", "openai", "httpx"}
    assert [line for line in lines if not line.endswith(" True")] == []


def test_the_version_is_written_once_in_pyproject() -> None:
    """``__version__`` is read from the installed metadata, which pyproject.toml gives."""
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    [written] = re.findall(r'^version = "([^"]+)"$', pyproject, re.MULTILINE)
    assert __version__ == written
    package = REPO_ROOT / "pytest_agent_skills"
    stated = [
        str(path.relative_to(REPO_ROOT))
        for path in sorted(package.rglob("*.py"))
        if re.search(r"^__version__\s*=|" + re.escape(f'"{written}"'), path.read_text(), re.M)
    ]
    assert stated == []


def release_workflow() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / ".github" / "workflows" / "release.yml").read_text())


def test_the_release_workflow_builds_checks_and_publishes_with_trusted_publishing() -> None:
    workflow = release_workflow()
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert trigger == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "read"}  # no job writes but the publisher
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    runs = [step.get("run", "") for step in build["steps"]]
    assert "python -m build" in runs
    assert "python -m twine check --strict dist/*" in runs
    assert any("upload-artifact" in step.get("uses", "") for step in build["steps"])
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    [publisher] = [step for step in publish["steps"] if "pypi-publish" in step.get("uses", "")]
    assert publisher["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert "with" not in publisher  # no password, no token: trusted publishing


@pytest.mark.parametrize("tag", ["matching", "v0.0.0-other"])
def test_the_release_refuses_a_tag_that_is_not_the_version(tag: str, tmp_path: Path) -> None:
    """The workflow's tag step, run as the runner runs it (bash, GITHUB_REF_NAME set)."""
    if sys.version_info < (3, 11):
        pytest.skip("the step reads pyproject.toml with tomllib (Python 3.11+, as the job has)")
    steps = release_workflow()["jobs"]["build"]["steps"]
    [check] = [step for step in steps if "tag" in step.get("name", "")]
    ref = f"v{__version__}" if tag == "matching" else tag
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "python").symlink_to(sys.executable)
    path = f"{programs}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(
        ["bash", "-e", "-c", check["run"]], cwd=REPO_ROOT, capture_output=True, text=True,
        env={**os.environ, "GITHUB_REF_NAME": ref, "PATH": path},
    )  # fmt: skip
    if tag == "matching":
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
    else:
        assert done.returncode == 1
        assert done.stdout == (
            f"::error::the tag v0.0.0-other is not v{__version__}, the version in pyproject.toml:"
            f" tag v{__version__}, or change the version first\n"
        )


def test_the_readme_and_the_ci_example_install_without_an_index() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    workflow = (REPO_ROOT / "docs" / "examples" / "skills-ci.yml").read_text(encoding="utf-8")
    for text in (readme, workflow):
        assert "pip install pytest-agent-skills\n" not in text  # not on the index yet
    install = readme[readme.index("## Install") : readme.index("## Quick start")]
    assert "python -m build" in install and "pip install dist/pytest_agent_skills-" in install
    assert "pip install ./vendor/pytest_agent_skills-" in workflow
