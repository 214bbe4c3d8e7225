"""The distribution: the sdist and the wheel build from this checkout, install into a fresh
virtualenv offline (the wheel file, plus dependencies already installed here), and carry
what an installed package needs: the scenario schema, the rule docs of `agent-skills rule`,
the pytest entry point and the console script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from pytest_agent_skills import __version__
from tests.support.skill_files import write_skill

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGED = (
    "pytest_agent_skills/schemas/scenario.schema.json",
    "pytest_agent_skills/schemas/audit.schema.json",
    "pytest_agent_skills/schemas/tokens.schema.json",
    "pytest_agent_skills/schemas/coverage.schema.json",
    "pytest_agent_skills/rules/rules.md",
    "pytest_agent_skills/evals/report/report.css",
    "pytest_agent_skills/evals/report/report.js",
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


def test_the_sdist_carries_the_docs_the_schema_and_the_rule_docs(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    prefix = f"pytest_agent_skills-{__version__}/"
    with tarfile.open(sdist) as archive:
        members = {member.name: member for member in archive.getmembers()}
        for name in (*PACKAGED, "docs/rules.md", "README.md", "pyproject.toml"):
            assert prefix + name in members, name
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
    assert "[pytest11]\nagent_skills = pytest_agent_skills.plugin" in entry_points
    assert "agent-skills = pytest_agent_skills.cli:main" in entry_points


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed offline; its dependencies come from this
    interpreter's site-packages (a path file), not from an index."""
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


def test_the_readme_and_the_ci_example_install_without_an_index() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    workflow = (REPO_ROOT / "docs" / "examples" / "skills-ci.yml").read_text(encoding="utf-8")
    for text in (readme, workflow):
        assert "pip install pytest-agent-skills\n" not in text  # not on the index yet
    install = readme[readme.index("## Install") : readme.index("## Quick start")]
    assert "python -m build" in install and "pip install dist/pytest_agent_skills-" in install
    assert "pip install ./vendor/pytest_agent_skills-" in workflow
