"""`agent-skills validate` and the pre-commit hook read the plugin's configuration (the
skills_* options of the file pytest uses, the SKILLS_* variables, the same precedence), so
pytest and the CLI agree on one repository."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_agent_skills.cli import main
from tests.support.cli import cli
from tests.support.skill_files import write_skill

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.usefixtures("clean_settings_env")

REPO_ROOT = Path(__file__).resolve().parents[2]
PYTEST_9 = pytest.version_tuple >= (9,)

CONFIG = {
    "tool.pytest.ini_options": """\
[tool.pytest.ini_options]
skills_roots = [".claude/skills"]
skills_profile = "claude-code"
skills_rule_severity = ["name-directory=warning"]
""",
    "tool.pytest": """\
[tool.pytest]
skills_roots = [".claude/skills"]
skills_profile = "claude-code"
skills_rule_severity = ["name-directory=warning"]
""",
    "pytest.ini": """\
[pytest]
skills_roots = .claude/skills
skills_profile = claude-code
skills_rule_severity =
    name-directory=warning
""",
    "setup.cfg": """\
[tool:pytest]
skills_roots = .claude/skills
skills_profile = claude-code
skills_rule_severity = name-directory=warning
""",
}


def make_repo(path: Path, config: str) -> None:
    """Three skills in a dot-folder root: one needs the claude-code profile, one has a name
    that differs from its folder (a warning by the configured severity), one is broken."""
    skills = path / ".claude" / "skills"
    write_skill(skills, "cc", front="name: cc\ndescription: D.\nwhen_to_use: often\n")
    write_skill(skills, "renamed", front="name: other-name\ndescription: D.\n")
    write_skill(skills, "broken", front="name: broken\n")
    name = "pyproject.toml" if config.startswith("tool.") else config
    (path / name).write_text(CONFIG[config], encoding="utf-8")


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(
            name,
            marks=pytest.mark.skipif(
                name == "tool.pytest" and not PYTEST_9, reason="[tool.pytest] is pytest 9's"
            ),
        )
        for name in CONFIG
    ],
)
def test_pytest_and_the_cli_agree_on_one_repository(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config: str,
) -> None:
    make_repo(pytester.path, config)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=2, failed=1)  # one item per skill
    result.stdout.fnmatch_lines(["FAILED .claude/skills/broken/SKILL.md::validate*"])
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()  # pytest's own report
    # No path: '.' and the configured roots, as pytest runs.
    status, out, _ = cli(capsys, "validate")
    assert status == 1
    lines = out.splitlines()
    assert lines[-1] == "3 skill(s) checked: 1 error(s), 1 warning(s); 1 skill(s) failed"
    assert ".claude/skills/broken/SKILL.md:1: error [description-missing]" in out
    assert ".claude/skills/renamed/SKILL.md:2: warning [name-directory]" in out


def test_the_cli_takes_flag_over_environment_over_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path, "tool.pytest.ini_options")
    monkeypatch.chdir(tmp_path)
    cc = ".claude/skills/cc"
    assert cli(capsys, "validate", cc)[0] == 0  # the file's claude-code profile
    monkeypatch.setenv("SKILLS_PROFILE", "spec")
    status, out, _ = cli(capsys, "validate", cc)
    assert status == 1 and "[field-unknown] unknown top-level field 'when_to_use'" in out
    assert cli(capsys, "validate", cc, "--profile", "claude-code")[0] == 0
    monkeypatch.setenv("SKILLS_RULE_SEVERITY", "field-unknown=off")
    assert cli(capsys, "validate", cc)[0] == 0


def test_the_config_file_is_found_from_the_paths_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path / "repo", "pytest.ini")
    monkeypatch.chdir(tmp_path)
    status, out, _ = cli(capsys, "validate", "repo/.claude/skills/renamed")
    assert status == 0, out
    assert "warning [name-directory]" in out


def test_a_bad_value_in_the_file_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path, "good")
    (tmp_path / "pytest.ini").write_text("[pytest]\nskills_profile = strict\n")
    monkeypatch.chdir(tmp_path)
    status = main(["validate", "good"])
    assert status == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"agent-skills validate: error: {tmp_path / 'pytest.ini'}: skills_profile: invalid choice"
        " 'strict' for --skills-profile (choose from spec, claude-code, trpc)"
    )



def test_a_bad_download_timeout_names_the_variable_it_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path, "good")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLS_DOWNLOAD_TIMEOUT", "0")
    status = main(["validate", "good"])
    assert status == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "agent-skills validate: error: environment variable SKILLS_DOWNLOAD_TIMEOUT:"
        " --skills-download-timeout must be a positive number of seconds, at most 3600, got 0.0"
    )

# --- the pre-commit hook --------------------------------------------------------------------------


def hook() -> dict:
    (entry,) = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    return entry


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_the_hook_runs_on_every_commit_and_validates_the_configured_repository(
    tmp_path: Path,
) -> None:
    entry = hook()
    # A deletion passes pre-commit no file name, and any file of a skill can break it: the hook
    # runs on every commit, over the repository as pytest sees it.
    assert entry["always_run"] is True
    assert entry["pass_filenames"] is False
    assert "files" not in entry
    repo = tmp_path / "repo"
    write_skill(
        repo / ".claude" / "skills",
        "guide",
        body="Read [the guide](docs/guide.md).\n",
        files={"docs/guide.md": "# Guide\n"},
    )
    (repo / "pyproject.toml").write_text(CONFIG["tool.pytest.ini_options"])
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "skills")
    script = Path(sys.executable).with_name("agent-skills")
    module = [sys.executable, "-m", "pytest_agent_skills.cli"]
    program = [str(script)] if script.exists() else module
    command = [*program, *shlex.split(entry["entry"])[1:]]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SKILLS_")}
    passed = subprocess.run(command, cwd=repo, capture_output=True, text=True, env=environment)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    git(repo, "rm", "-q", ".claude/skills/guide/docs/guide.md")  # a deletion-only commit
    failed = subprocess.run(command, cwd=repo, capture_output=True, text=True, env=environment)
    assert failed.returncode == 1
    assert ".claude/skills/guide/SKILL.md:5: error [reference-missing]" in failed.stdout


# --- with no path, the CLI checks what a bare pytest collects -------------------------------------


def collected_by_pytest(pytester: pytest.Pytester, *arguments: str) -> set[str]:
    result = pytester.runpytest("--co", "-q", "-p", "no:cacheprovider", *arguments)
    return {
        line.split("::")[0] for line in result.outlines if line.split("::")[0].endswith("SKILL.md")
    }


def checked_by_the_cli(capsys: pytest.CaptureFixture[str]) -> set[str]:
    capsys.readouterr()
    main(["validate", "--format", "json", "--exit-zero"])
    document = json.loads(capsys.readouterr().out)
    return {str(Path(skill["path"]) / "SKILL.md") for skill in document["skills"]}


SELECTION_LAYOUT = (
    "skills/alpha",
    "skills/legacy/old",  # a norecursedirs folder
    "skills/build/built",  # build/ is in pytest's default norecursedirs only
    "skills/env/inside",  # a virtual environment: never walked
    "plugins/one/skills/p1",
    "plugins/two/skills/p2",
    "docs/examples/not-tested",  # outside testpaths
    ".claude/skills/configured",  # only through skills_roots
    "node_modules/pkg/vendored",
)


def make_selection_repo(path: Path, config: str) -> None:
    for folder in SELECTION_LAYOUT:
        write_skill(path / Path(folder).parent, Path(folder).name)
    (path / "skills" / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (path / "pyproject.toml").write_text(config, encoding="utf-8")


@pytest.mark.parametrize(
    "config",
    [
        "[tool.pytest.ini_options]\n"
        'testpaths = ["skills", "plugins/*/skills"]\n'
        'norecursedirs = ["legacy", ".*"]\n'
        'skills_roots = [".claude/skills"]\n',
        "[tool.pytest.ini_options]\ntestpaths = [\"skills\"]\n",
        '[tool.pytest.ini_options]\nskills_roots = [".claude/skills"]\n',
        '[tool.pytest.ini_options]\nnorecursedirs = "node_*  legacy"\ntestpaths = "skills docs"\n',
        '[tool.pytest.ini_options]\ntestpaths = ["no-such-folder"]\n',
        '[tool.pytest.ini_options]\ntestpaths = ["docs/examples/not-tested/SKILL.md", "plugins"]\n',
    ],
    ids=[
        "testpaths-globs-norecursedirs-roots",
        "testpaths",
        "roots",
        "ini-texts",
        "no-match",
        "a-file",
    ],
)
def test_with_no_path_the_cli_checks_what_pytest_collects(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config: str,
) -> None:
    make_selection_repo(pytester.path, config)
    expected = collected_by_pytest(pytester)
    assert expected  # the layout holds skills pytest collects
    monkeypatch.chdir(pytester.path)
    assert checked_by_the_cli(capsys) == expected


def test_a_pyvenv_cfg_link_to_nothing_makes_no_environment_for_either(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest asks whether pyvenv.cfg is a file: a dangling link is none, so the folder is walked.
    write_skill(pytester.path / "skills" / "venv-like", "inside")
    (pytester.path / "skills" / "venv-like" / "pyvenv.cfg").symlink_to("missing.cfg")
    config = '[tool.pytest.ini_options]\ntestpaths = ["skills"]\n'
    (pytester.path / "pyproject.toml").write_text(config, encoding="utf-8")
    expected = collected_by_pytest(pytester)
    assert expected == {"skills/venv-like/inside/SKILL.md"}
    monkeypatch.chdir(pytester.path)
    assert checked_by_the_cli(capsys) == expected


def test_below_the_rootdir_both_take_the_current_folder(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # testpaths apply only to a run from the rootdir; elsewhere pytest walks the current folder.
    make_selection_repo(pytester.path, '[tool.pytest.ini_options]\ntestpaths = ["skills"]\n')
    below = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"],
        cwd=pytester.path / "plugins",
        capture_output=True,
        text=True,
        check=False,
    )
    expected = {  # node ids are relative to the rootdir
        line.split("::")[0]
        for line in below.stdout.splitlines()
        if line.split("::")[0].endswith("SKILL.md")
    }
    assert expected == {"plugins/one/skills/p1/SKILL.md", "plugins/two/skills/p2/SKILL.md"}
    monkeypatch.chdir(pytester.path / "plugins")
    assert {f"plugins/{path}" for path in checked_by_the_cli(capsys)} == expected


def test_the_readme_s_pre_commit_entry_pins_a_commit_of_this_hook() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- pre-commit-config:begin")[1].split("<!-- pre-commit-config:end")[0]
    text = block.split("```yaml\n")[1].split("```")[0]
    (repository,) = yaml.safe_load(text)["repos"]
    assert re.fullmatch(r"[0-9a-f]{40}", str(repository["rev"])), repository["rev"]
    assert [hook["id"] for hook in repository["hooks"]] == [hook()["id"]]
    assert "rev: <tag>" not in readme
