"""The configuration file of each path, found without pytest: the same answer as pytest's own
search on many layouts, each folder looked at once however many paths share it, and nested
projects keeping their own settings.

The answer is held to pytest's internal ``locate_config``, whose shape changed in pytest 9
(a fourth value, the files it ignored; each value wrapped with its origin), as did what it
reads: ``pytest.toml``, ``.pytest.toml``, ``pyproject.toml``'s ``[tool.pytest]`` table and an
``.pytest.ini`` without a ``[pytest]`` section are pytest's files from pytest 9 on.  The command
reads them as the installed pytest does: the layouts hold them under pytest 8.4 too.
These tests are ``pytest_facing`` (tests/conftest.py): the nox sessions run them on the oldest
and the newest pytest.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from _pytest.config.findpaths import locate_config

from pytest_agent_skills.cli import main
from pytest_agent_skills.config.locate import ConfigLocator
from pytest_agent_skills.errors import ConfigurationError
from tests.support.skill_files import write_skill

#: Whether the installed pytest reads pytest 9's files: ``pytest.toml``, ``.pytest.toml``,
#: ``[tool.pytest]``, an ``.pytest.ini`` without ``[pytest]`` (pytest 8.4 reads none of them).
READS_PYTEST_9_FILES = int(pytest.__version__.split(".")[0]) >= 9
PYTEST_9_FILES = pytest.mark.skipif(
    not READS_PYTEST_9_FILES, reason=f"pytest {pytest.__version__} does not read pytest 9's files"
)

#: Contents each configuration file name may have in a generated layout: with pytest's
#: section, without it, empty.
CONTENTS = {
    "pytest.ini": ["[pytest]\nskills_profile = trpc\n", "", "[other]\nx = 1\n"],
    ".pytest.ini": ["[pytest]\nskills_roots = a\n    b\n"],
    "pyproject.toml": [
        '[tool.pytest.ini_options]\nskills_profile = "claude-code"\nskills_roots = ["a", "b"]\n'
        "skills_refresh = true\n",
        "[tool.pytest.ini_options]\n",
        '[project]\nname = "x"\n',
        "",
    ],
    "tox.ini": ["[pytest]\nskills_profile = trpc\n", "[tox]\nenvlist = py\n"],
    "setup.cfg": ["[tool:pytest]\nskills_profile = spec\n", "[metadata]\nname = x\n"],
}
# pytest 9's files, in every layout: under pytest 8.4 both pass over them.
CONTENTS["pytest.toml"] = ['[pytest]\nskills_profile = "trpc"\n', "", "[other]\nx = 1\n"]
CONTENTS[".pytest.toml"] = ["[pytest]\nskills_refresh = true\n", ""]
CONTENTS[".pytest.ini"].append("")  # empty, it is pytest's file from pytest 9 on
native = '[tool.pytest]\nskills_profile = "trpc"\nskills_refresh = true\n'
CONTENTS["pyproject.toml"].insert(1, native)
LEVELS = ("", "a", "a/b", "a/b/c")


def pytest_answer(invocation_dir: Path, argument: str) -> tuple[Path | None, dict[str, object]]:
    # (rootdir, inipath, values), and from pytest 9 the files it ignored.
    found = locate_config(invocation_dir, [invocation_dir / argument])
    inipath, values = found[1], found[2]
    # pytest 9 wraps each value with its origin; pytest 8.4 gives the value itself.
    return inipath, {name: getattr(item, "value", item) for name, item in values.items()}


def our_answer(invocation_dir: Path, argument: str) -> tuple[Path | None, dict[str, object]]:
    config = ConfigLocator(invocation_dir).locate(argument)
    return config.path, dict(config.values)


def random_layout(root: Path, generator: random.Random) -> None:
    for level in LEVELS:
        folder = root / level
        folder.mkdir(parents=True, exist_ok=True)
        for name in generator.sample(sorted(CONTENTS), generator.choice([0, 0, 1, 1, 2, 3])):
            (folder / name).write_text(generator.choice(CONTENTS[name]), encoding="utf-8")
    write_skill(root / "a/b/c", "skill")
    if generator.random() < 0.2:  # a folder with a configuration file's name is no file
        folder = root / "a/b" / generator.choice(sorted(CONTENTS))
        if not folder.exists():
            folder.mkdir()


@pytest.mark.parametrize("seed", range(120))
def test_the_file_found_is_the_one_pytest_finds(tmp_path: Path, seed: int) -> None:
    generator = random.Random(seed)
    random_layout(tmp_path, generator)
    arguments = [
        "a/b/c/skill/SKILL.md",
        "a/b/c/skill",
        "a/b",
        ".",
        "a/missing/folder",
        str(tmp_path / "a/b/c"),
    ]
    for argument in arguments:
        assert our_answer(tmp_path, argument) == pytest_answer(tmp_path, argument), argument
    # From a folder below the paths, with '..' in them.
    inner = tmp_path / "a/b/c"
    for argument in ("..", "../../b/c/skill", "skill/SKILL.md"):
        assert our_answer(inner, argument) == pytest_answer(inner, argument), argument


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[tool.pytest.ini_options\n"),
        pytest.param("pytest.toml", "[pytest]\nx = \n", marks=PYTEST_9_FILES),
        ("pytest.ini", "[pytest]\n  indented = first\n"),
        ("setup.cfg", "[pytest]\nskills_profile = trpc\n"),
        pytest.param(
            "pyproject.toml",
            '[tool.pytest]\nx = "1"\n[tool.pytest.ini_options]\ny = "2"\n',
            marks=PYTEST_9_FILES,
        ),
    ],
)
def test_a_file_pytest_refuses_is_refused_with_pytest_s_words(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(BaseException) as theirs:  # a UsageError, or a Failed outcome
        locate_config(tmp_path, [tmp_path])
    with pytest.raises(ConfigurationError) as ours:
        ConfigLocator(tmp_path).locate(".")
    assert str(ours.value) == str(theirs.value)


def counted_listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders listed from now on (``os.listdir``, ``os.scandir``), each time one is."""
    listed: list[str] = []
    for name in ("listdir", "scandir"):
        monkeypatch.setattr(os, name, _counting(getattr(os, name), listed))
    return listed


def _counting(function: Any, listed: list[str]) -> Any:
    def counting(folder: str) -> Any:
        listed.append(os.fspath(folder))
        return function(folder)

    return counting


def test_each_folder_is_looked_at_once_for_many_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nskills_profile = 'trpc'\n")
    skills = [write_skill(tmp_path / "repo" / "skills", f"skill-{index}") for index in range(40)]
    listed = counted_listings(monkeypatch)
    locator = ConfigLocator(tmp_path)
    configs = {id(locator.locate(skill / "SKILL.md")) for skill in skills}
    configs |= {id(locator.locate(skill)) for skill in skills}
    assert len(configs) == 1  # one file, one object: its options are built once
    assert sorted(listed) == sorted(
        {*map(str, skills), str(tmp_path / "repo/skills"), str(tmp_path / "repo"), str(tmp_path)}
    )


def test_validate_given_many_skill_files_lists_each_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The listing that locates a skill's configuration also finds its SKILL.md and its files.
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nskills_profile = 'trpc'\n")
    files = {"docs/guide.md": "# Guide\n", "scripts/run.py": "print()\n"}
    body = "Read [the guide](docs/guide.md), run `python scripts/run.py`.\n"
    skills = [
        write_skill(tmp_path / "skills", f"skill-{index}", body=body, files=files)
        for index in range(5)
    ]
    monkeypatch.chdir(tmp_path)
    listed = counted_listings(monkeypatch)
    assert main(["validate", *(f"skills/{skill.name}/SKILL.md" for skill in skills)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("5 skill(s) checked: 0 error(s)")
    assert len(listed) == len(set(listed))
    assert {*map(str, skills)} <= set(listed)


NESTED_FRONT = "name: {name}\ndescription: D.\nwhen_to_use: often\n"


def test_paths_in_a_nested_project_keep_its_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The outer repository is strict (spec profile); the nested project has its own pytest.ini
    # with the claude-code profile, under which `when_to_use` is a known field.
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nskills_profile = 'spec'\n")
    write_skill(tmp_path / "skills", "outer", front=NESTED_FRONT.format(name="outer"))
    nested = tmp_path / "plugins" / "cc"
    (nested / "skills").mkdir(parents=True)
    (nested / "pytest.ini").write_text("[pytest]\nskills_profile = claude-code\n")
    write_skill(nested / "skills", "inner", front=NESTED_FRONT.format(name="inner"))
    write_skill(nested / "skills", "second", front=NESTED_FRONT.format(name="second"))
    monkeypatch.chdir(tmp_path)
    for order in (
        ["skills/outer/SKILL.md", "plugins/cc/skills/inner/SKILL.md", "plugins/cc/skills/second"],
        ["plugins/cc/skills/inner/SKILL.md", "plugins/cc/skills/second", "skills/outer/SKILL.md"],
    ):
        status = main(["validate", *order])
        out = capsys.readouterr().out
        assert status == 1
        unknown = [line for line in out.splitlines() if "[field-unknown]" in line]
        assert len(unknown) == 1
        assert unknown[0].startswith("skills/outer/SKILL.md:4: error [field-unknown]")
        assert out.splitlines()[-1].startswith("3 skill(s) checked: 1 error(s)")
    # Alone, the nested skill passes; the outer one fails: as pytest run on each path.
    assert main(["validate", "plugins/cc/skills/inner"]) == 0
    assert main(["validate", "skills/outer"]) == 1


def test_a_flag_beats_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nskills_profile = spec\n")
    nested = tmp_path / "nested"
    nested.mkdir()
    (nested / "pytest.ini").write_text("[pytest]\nskills_profile = claude-code\n")
    write_skill(tmp_path, "outer", front=NESTED_FRONT.format(name="outer"))
    write_skill(nested, "inner", front=NESTED_FRONT.format(name="inner"))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--profile", "claude-code", "outer", "nested/inner"]) == 0
    assert main(["validate", "--profile", "spec", "outer", "nested/inner"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "2 skill(s) checked: 2 error(s), 0 warning(s); 2 skill(s) failed"
