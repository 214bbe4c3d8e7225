"""What pytest enters inside a skill folder: only where something can be collected (the
plugin's files, pytest's python_files, conftest.py and doctest files, paths named on the command
line), each as pytest collects it; ``skills_walk_skill_folders`` walks all of it."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.support.pytester_runs import QUIET_PLUGINS, run
from tests.support.skill_files import write_skill

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.usefixtures("clean_settings_env")

WALK_ALL = ("-o", "skills_walk_skill_folders=true")

SCENARIO = """\
user: Hello?
model:
  script:
    - say: done
expect:
  final: {contains: done}
"""
PASSING_TEST = "def test_ok():\n    pass\n"
DOCTEST = ">>> 1 + 1\n2\n"
#: A conftest plugin collecting every Markdown file but SKILL.md, as a Markdown plugin would.
MARKDOWN_PLUGIN = """
import pytest


class MarkdownFile(pytest.File):
    def collect(self):
        yield MarkdownItem.from_parent(self, name="read")


class MarkdownItem(pytest.Item):
    def runtest(self):
        self.path.read_text()


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and file_path.name != "SKILL.md":
        return MarkdownFile.from_parent(parent, path=file_path)
"""


@pytest.fixture
def repo(pytester: pytest.Pytester) -> pytest.Pytester:
    """``skills/pdf``: a skill with its own tests, a doctest file, a scenario, trigger queries
    and a skill inside it, beside folders nothing collects (documents, a script that is no test
    module, a dot-folder and node_modules holding test modules pytest does not walk into)."""
    write_skill(
        pytester.path / "skills",
        "pdf",
        files={
            "references/guide.md": "# Guide\n",
            "scripts/summarise.py": PASSING_TEST.replace("test_ok", "test_summary"),
            "tests/test_pdf.py": PASSING_TEST,
            "docs/test_usage.txt": DOCTEST,
            "evals/pdf.scenario.yaml": SCENARIO,
            "evals/triggers.json": "[]\n",
            ".cache/test_hidden.py": PASSING_TEST,
            "node_modules/lib/test_lib.py": PASSING_TEST,
        },
    )
    write_skill(pytester.path / "skills" / "pdf" / "nested", "forms")
    pytester.makeconftest(MARKDOWN_PLUGIN)
    return pytester


def test_a_skill_folder_enters_only_where_something_can_be_collected(
    repo: pytest.Pytester,
) -> None:
    result = run(repo, "--collect-only")
    result.stdout.fnmatch_lines(
        [
            "  <Dir skills>",
            "    <SkillFolder pdf>",
            "      <SkillFile pdf>",
            "        <SkillItem validate>",
            "      <Dir docs>",
            "        <DoctestTextfile test_usage.txt>",
            "          <DoctestItem test_usage.txt>",
            "      <Dir evals>",
            "        <ScenarioFile pdf.scenario.yaml>",
            "          <ScenarioItem pdf>",
            "        <TriggersFile triggers.json>",
            "          <TriggersItem triggers>",
            "      <Dir nested>",
            "        <SkillFolder forms>",
            "          <SkillFile forms>",
            "            <SkillItem validate>",
            "      <Dir tests>",
            "        <Module test_pdf.py>",
            "          <Function test_ok>",
            "*= 6 tests collected in *",
        ]
    )
    output = result.stdout.str()
    for absent in ("references", "scripts", "guide.md", "test_hidden", "test_lib", "<Dir pdf>"):
        assert absent not in output


def test_walking_skill_folders_offers_every_file_to_every_plugin(repo: pytest.Pytester) -> None:
    result = run(repo, "--collect-only", "-q", *WALK_ALL)
    result.stdout.fnmatch_lines(["skills/pdf/references/guide.md::read", "*7 tests collected*"])
    tree = run(repo, "--collect-only", "--skills-walk-skill-folders")
    tree.stdout.fnmatch_lines(["    <Dir pdf>", "      <SkillFile pdf>", "      <Dir references>"])
    assert "SkillFolder" not in tree.stdout.str()


@pytest.mark.parametrize(
    ("args", "collected"),
    [
        (["skills/pdf/SKILL.md"], ["skills/pdf/SKILL.md::validate"]),
        (["skills/pdf/SKILL.md::validate"], ["skills/pdf/SKILL.md::validate"]),
        (["skills/pdf/tests/test_pdf.py::test_ok"], ["skills/pdf/tests/test_pdf.py::test_ok"]),
        # given by name, a module that is no python_files match and a file only a plugin takes
        (["skills/pdf/scripts/summarise.py"], ["skills/pdf/scripts/summarise.py::test_summary"]),
        (["skills/pdf/references"], ["skills/pdf/references/guide.md::read"]),
        (["skills/pdf/nested/forms"], ["skills/pdf/nested/forms/SKILL.md::validate"]),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) and len(value) < 2 else None,
)
def test_a_path_inside_a_skill_folder_collects_what_pytest_would(
    repo: pytest.Pytester, args: list[str], collected: list[str]
) -> None:
    result = run(repo, "--collect-only", "-q", *args)
    result.stdout.fnmatch_lines([*collected, f"{len(collected)} test* collected*"])


def test_ignore_options_and_norecursedirs_apply_inside_a_skill_folder(
    repo: pytest.Pytester,
) -> None:
    def collected(*args: str) -> set[str]:
        result = run(repo, "--collect-only", "-q", *args)
        return {line for line in result.stdout.lines if "::" in line}

    everything = collected()
    assert "skills/pdf/tests/test_pdf.py::test_ok" in everything
    assert collected("--ignore=skills/pdf/tests") == everything - {
        "skills/pdf/tests/test_pdf.py::test_ok"
    }
    assert collected("--ignore-glob=*/evals/*") == everything - {
        "skills/pdf/evals/pdf.scenario.yaml::pdf",
        "skills/pdf/evals/triggers.json::triggers",
    }
    assert collected("--ignore=skills/pdf/SKILL.md") == everything - {
        "skills/pdf/SKILL.md::validate"
    }
    # norecursedirs replaced: the dot-folder and node_modules are walked, tests/ is not
    hidden = "skills/pdf/.cache/test_hidden.py::test_ok"
    in_node_modules = "skills/pdf/node_modules/lib/test_lib.py::test_ok"
    assert collected("-o", "norecursedirs=tests") == everything - {
        "skills/pdf/tests/test_pdf.py::test_ok"
    } | {hidden, in_node_modules}
    repo.makeconftest(MARKDOWN_PLUGIN + "\ncollect_ignore = ['skills/pdf/nested']\n")
    assert collected() == everything - {"skills/pdf/nested/forms/SKILL.md::validate"}


def test_doctest_options_decide_which_files_are_entered(repo: pytest.Pytester) -> None:
    script = repo.path / "skills" / "pdf" / "scripts" / "summarise.py"
    script.write_text('def total():\n    """\n    >>> 2 + 2\n    4\n    """\n')
    result = run(repo, "--collect-only", "-q", "--doctest-modules", "skills")
    result.stdout.fnmatch_lines(["skills/pdf/scripts/summarise.py::summarise.total"])
    (repo.path / "skills" / "pdf" / "references" / "guide.md").write_text(DOCTEST)
    result = run(repo, "--collect-only", "-q", "--doctest-glob=*.md", "skills")
    result.stdout.fnmatch_lines(["skills/pdf/references/guide.md::guide.md"])
    assert "docs/test_usage.txt" not in result.stdout.str()  # the default glob is replaced


def test_a_skill_folder_with_a_conftest_or_an_init_is_walked_as_pytest_does(
    pytester: pytest.Pytester,
) -> None:
    files = {"references/guide.md": "# Guide\n", "conftest.py": MARKDOWN_PLUGIN}
    write_skill(pytester.path / "skills", "local-plugin", files=files)
    write_skill(pytester.path / "skills", "package", files={"__init__.py": ""})
    result = run(pytester, "--collect-only")
    result.stdout.fnmatch_lines(
        [
            "    <Dir local-plugin>",
            "      <SkillFile local-plugin>",
            "      <Dir references>",
            "        <MarkdownFile guide.md>",
            "    <Package package>",
            "      <SkillFile package>",
        ]
    )


def test_last_failed_reruns_the_failing_skill_only(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path / "skills", "good", files={"tests/test_good.py": PASSING_TEST})
    write_skill(pytester.path / "skills", "bad", front="name: Bad\ndescription: D.\n")
    quiet = ("-p", "no:hypothesispytest", "-p", "no:benchmark")
    pytester.runpytest(*quiet).assert_outcomes(passed=2, failed=1)
    result = pytester.runpytest(*quiet, "--lf", "-v")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "collecting ... collected 1 item",
            "run-last-failure: rerun previous 1 failure (skipped 2 files)",
            "skills/bad/SKILL.md::validate FAILED*",
        ]
    )


def test_a_link_back_inside_a_skill_folder_is_not_walked(pytester: pytest.Pytester) -> None:
    skill = write_skill(pytester.path / "skills", "looped", files={"scripts/run.sh": "true\n"})
    (skill / "scripts" / "back").symlink_to("..", target_is_directory=True)
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "agent-skills: skills/looped/scripts/back -> ..: a symbolic link back into a folder it"
            " is in, not followed",
            "skills/looped/SKILL.md::validate PASSED*",
        ]
    )


#: As root, pytest runs without the capabilities that let root read any folder, so that a
#: folder's permissions refuse it a listing as they refuse a normal user.
WITHOUT_READ_OVERRIDE = ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")


def test_a_folder_that_cannot_be_listed_is_reported_as_pytest_reports_it(
    pytester: pytest.Pytester,
) -> None:
    as_root = os.geteuid() == 0
    if as_root and shutil.which("setpriv") is None:
        pytest.skip("as root, dropping the read override needs setpriv (util-linux)")
    locked = write_skill(pytester.path / "skills", "locked", files={"scripts/run.sh": "true\n"})
    (locked / "scripts").chmod(0o000)
    unlistable = write_skill(pytester.path / "skills", "unlistable")
    unlistable.chmod(0o100)  # SKILL.md can be reached, the folder not listed
    try:
        if as_root:
            command = [*WITHOUT_READ_OVERRIDE, sys.executable, "-m", "pytest", *QUIET_PLUGINS]
            result = pytester.run(*command, "--collect-only")
        else:
            result = run(pytester, "--collect-only")
    finally:
        (locked / "scripts").chmod(0o755)
        unlistable.chmod(0o755)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting skills/locked/scripts*",
            "*PermissionError*",
            "*ERROR collecting skills/unlistable*",
            "*PermissionError*",
        ]
    )
