"""pytest habits: paths and node ids narrow what runs, --ignore applies to skill roots,
command line > environment variable > configuration file, and pytest 9's native
``[tool.pytest]`` table takes TOML booleans, numbers and arrays."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agent_skills import settings
from tests.support.pytester_runs import QUIET_PLUGINS, run
from tests.support.skill_files import write_skill

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.usefixtures("clean_settings_env")

#: Items of a skill: one (validate) by default.
SKILL_ITEMS = 1
EXAMPLE_SUITE = Path(__file__).resolve().parents[2] / "example_suite"
PYTEST_9 = pytest.version_tuple >= (9,)

SCENARIO = """\
user: Hello?
model:
  script:
    - {call: skill_load, args: {skill_name: alpha}}
    - say: done
expect:
  final: {contains: done}
"""


@pytest.fixture
def repo(pytester: pytest.Pytester) -> pytest.Pytester:
    """A skill repository: two skills in a dot-folder root (one with an eval), plain tests."""
    root = pytester.path / ".claude" / "skills"
    write_skill(root, "alpha", files={"evals/hello.scenario.yaml": SCENARIO})
    write_skill(root, "beta")
    pytester.makepyfile(
        **{"tests/test_plain.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n"}
    )
    pytester.makeini("[pytest]\nskills_roots = .claude/skills\n")
    return pytester


# --- 1. paths and node ids narrow what runs -----------------------------------------------------


def test_no_path_runs_every_skill_of_the_roots(repo: pytest.Pytester) -> None:
    run(repo).assert_outcomes(passed=2 + 2 * SKILL_ITEMS + 1)


@pytest.mark.parametrize(
    ("args", "passed"),
    [
        (["tests/test_plain.py"], 2),
        (["tests/test_plain.py::test_two"], 1),
        (["tests"], 2),
        ([".claude/skills/beta"], SKILL_ITEMS),
        ([".claude/skills/alpha"], SKILL_ITEMS + 1),
        ([".claude/skills/alpha/SKILL.md::validate"], 1),
        ([".claude/skills/alpha/evals/hello.scenario.yaml"], 1),
        ([".claude/skills"], 2 * SKILL_ITEMS + 1),
        (["."], 2 + 2 * SKILL_ITEMS + 1),
        (["tests", ".claude/skills/beta/SKILL.md"], 2 + SKILL_ITEMS),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_paths_and_node_ids_narrow_what_runs(
    repo: pytest.Pytester, args: list[str], passed: int
) -> None:
    result = run(repo, *args)
    result.assert_outcomes(passed=passed)


def test_ignore_applies_to_skill_roots(repo: pytest.Pytester) -> None:
    run(repo, "--ignore=.claude/skills/alpha").assert_outcomes(passed=2 + SKILL_ITEMS)
    run(repo, "--ignore=.claude").assert_outcomes(passed=2)
    run(repo, "--ignore-glob=*/evals/*").assert_outcomes(passed=2 + 2 * SKILL_ITEMS)
    repo.makepyfile(
        ignore_beta="def pytest_ignore_collect(collection_path):\n"
        "    return collection_path.name == 'beta' or None\n"
    )
    repo.syspathinsert()
    run(repo, "-p", "ignore_beta").assert_outcomes(passed=2 + SKILL_ITEMS + 1)


def test_a_root_outside_the_test_paths_runs_only_when_named(pytester: pytest.Pytester) -> None:
    write_skill(pytester.path / "shared" / "skills", "gamma")
    pytester.makepyfile(**{"tests/test_plain.py": "def test_one():\n    pass\n"})
    pytester.makeini("[pytest]\ntestpaths = tests\nskills_roots = shared/skills\n")
    run(pytester).assert_outcomes(passed=1 + SKILL_ITEMS)
    run(pytester, "tests").assert_outcomes(passed=1)
    run(pytester, "shared").assert_outcomes(passed=SKILL_ITEMS)
    run(pytester, "-k", "gamma").assert_outcomes(passed=SKILL_ITEMS)


# --- 2. no false name-duplicate for a file given inside a skill -----------------------------------


def test_a_scenario_and_its_skill_given_together_are_no_duplicate(repo: pytest.Pytester) -> None:
    result = run(repo, ".claude/skills/alpha/evals/hello.scenario.yaml", ".claude/skills/alpha")
    result.assert_outcomes(passed=SKILL_ITEMS + 1)
    assert "name-duplicate" not in result.stdout.str()


def test_the_example_suite_scenario_alone(tmp_path: Path) -> None:
    suite = Path(shutil.copytree(EXAMPLE_SUITE, tmp_path / "example_suite", symlinks=True))
    scenario = ".claude/skills/invoice-totals/evals/totals.scenario.yaml"
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", scenario],
        cwd=suite,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "name-duplicate" not in completed.stdout
    assert "1 passed" in completed.stdout, completed.stdout
    assert f"PASSED {scenario}::totals for two customers" in completed.stdout


# --- 3. command line > environment variable > configuration file ----------------------------------


def header(result: pytest.RunResult) -> str:
    (line,) = [line for line in result.stdout.lines if line.startswith("agent-skills: ")]
    return line


def test_the_environment_beats_the_file_and_the_command_line_beats_both(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nskills_runtime = sandbox\nskills_coverage = true\n")
    assert "skills_runtime=sandbox" in header(run(pytester, "--co"))
    monkeypatch.setenv("SKILLS_RUNTIME", "docker")
    monkeypatch.setenv("SKILLS_COVERAGE", "false")
    from_env = header(run(pytester, "--co"))
    assert "skills_runtime=docker" in from_env
    assert "skills_coverage" not in from_env  # back at its default
    assert "skills_runtime=local" in header(run(pytester, "--co", "--skills-runtime=local"))
    assert "skills_runtime=local" in header(run(pytester, "--co", "-o", "skills_runtime=local"))


def test_a_bad_environment_value_names_the_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLS_PROFILE", "strict")
    result = run(pytester, "--co")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: environment variable SKILLS_PROFILE: invalid choice 'strict' for"
            " --skills-profile (choose from spec, claude-code, trpc)"
        ]
    )


SAMPLES = {"bool": (True, "false", "true"), "int": (3, "4", "5"), "float": (1.5, "2.5", "3.5")}


@pytest.mark.parametrize("setting", list(settings.load_all()), ids=lambda s: s.ini)
def test_every_setting_takes_the_same_precedence(setting: settings.Setting) -> None:
    """Command line, then the environment variable, then the file, for every registered
    setting (each has an environment variable)."""
    if setting.kind in SAMPLES:
        cli, env, ini = SAMPLES[setting.kind]
    elif setting.kind == "choice":
        cli, env, ini = (setting.choices * 3)[:3]
    elif setting.kind == "list":
        cli, env, ini = ["from-cli"], "from-env", ["from-file"]
    elif setting.kind == "params":
        cli, env, ini = ["seed=1"], "seed=2", ["seed=3"]
    else:
        cli, env, ini = "from-cli", "from-env", "from-file"
    environ = {setting.env_name: env}
    typed = settings.convert(setting, env, "test")
    assert settings.resolve(setting, cli, ini, environ) == settings.convert(setting, cli, "test")
    assert settings.resolve(setting, None, ini, environ) == typed
    assert settings.resolve(setting, None, ini, {}) == settings.convert(setting, ini, "test")
    assert settings.resolve(setting, None, None, {}) == setting.default


def test_a_list_of_lines_drops_blank_lines_and_padding() -> None:
    """A multi-line list value (an environment variable from a CI ``|`` block) reads as pytest
    reads a configuration file's: stripped lines, blank ones dropped (an empty root would be
    the rootdir)."""
    roots = settings.REGISTRY["skills_roots"]
    environ = {roots.env_name: "\n  skills\n\n  more skills  \n"}
    assert settings.resolve(roots, None, None, environ) == ["skills", "more skills"]
    assert settings.resolve(roots, None, None, {roots.env_name: "a b"}) == ["a", "b"]

# --- 4. pytest 9's native [tool.pytest] table and [tool.pytest.ini_options] -----------------------

NATIVE = """\
[tool.pytest]
skills_roots = [".claude/skills"]
skills_coverage = true
skills_validate = true
skills_allow_unknown_fields = false
skills_download_timeout = 5
skills_rule_severity = ["body-empty=off"]
"""
INI_OPTIONS = """\
[tool.pytest.ini_options]
skills_roots = [".claude/skills"]
skills_coverage = true
skills_validate = "true"
skills_allow_unknown_fields = "false"
skills_download_timeout = "5"
skills_rule_severity = ["body-empty=off"]
"""


@pytest.mark.parametrize(
    "table",
    [
        pytest.param(
            NATIVE,
            id="tool.pytest",
            marks=pytest.mark.skipif(not PYTEST_9, reason="[tool.pytest] is pytest 9's"),
        ),
        pytest.param(INI_OPTIONS, id="tool.pytest.ini_options"),
    ],
)
def test_both_pyproject_tables_take_typed_values(pytester: pytest.Pytester, table: str) -> None:
    write_skill(pytester.path / ".claude" / "skills", "alpha", body="")
    pytester.makepyprojecttoml(table)
    result = run(pytester, "-W", "error::UserWarning")
    result.assert_outcomes(passed=SKILL_ITEMS)
    assert header(result) == (
        "agent-skills: skills_roots=[.claude/skills], skills_profile=spec,"
        " skills_rule_severity=[body-empty=off], skills_runtime=local, skills_record=none,"
        " skills_coverage=true, skills_download_timeout=5.0"
    )
    result.stdout.fnmatch_lines(["*- skill coverage -*"])


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        pytest.param(
            "pyproject.toml",
            '[tool.pytest]\nskills_coverage = "maybe"\n',
            "ERROR: *pyproject.toml: config option 'skills_coverage' expects a bool, got str:"
            " 'maybe'; skills_coverage takes true or false",
            marks=pytest.mark.skipif(not PYTEST_9, reason="[tool.pytest] is pytest 9's"),
            id="native-bool",
        ),
        pytest.param(
            "tox.ini",
            "[pytest]\nskills_coverage = maybe\n",
            "ERROR: *tox.ini: option skills_coverage: *'maybe'*; skills_coverage takes true or"
            " false",
            id="ini-bool",
        ),
        pytest.param(
            "pyproject.toml",
            '[tool.pytest.ini_options]\nskills_eval_runs = "abc"\n',
            "ERROR: *pyproject.toml: option skills_eval_runs: *'abc'; skills_eval_runs takes a"
            " whole number, such as 3",
            id="ini-options-int",
        ),
    ],
)
def test_a_badly_typed_value_names_the_file_the_option_and_what_it_takes(
    pytester: pytest.Pytester, file: str, text: str, message: str
) -> None:
    (pytester.path / file).write_text(text, encoding="utf-8")
    result = run(pytester, "--co")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


# --- 5. JUnit XML valid under the default junit_family=xunit2 -------------------------------------


def test_junit_xml_has_the_junit_10_shape_under_xunit2(repo: pytest.Pytester) -> None:
    from tests.support.junit_shape import problems

    write_skill(repo.path / ".claude" / "skills", "Bad_Name", front="name: Bad_Name\n")
    run(repo, "--junitxml=report.xml")
    xml = (repo.path / "report.xml").read_bytes()
    assert b"<failure" in xml and b"<properties>" not in xml
    assert problems(xml) == []
    run(repo, "--junitxml=checks.xml", "-o", "skills_items=check")
    checks = (repo.path / "checks.xml").read_bytes()
    assert checks.count(b"<failure") == 2 and b"<properties>" not in checks  # fields, name
    assert problems(checks) == []
    run(repo, "--junitxml=legacy.xml", "-o", "junit_family=xunit1")
    legacy = (repo.path / "legacy.xml").read_text()
    assert '<property name="skill_name" value="Bad_Name" />' in legacy
    assert '<property name="scenario"' in legacy
    assert problems(legacy)  # per-case properties: valid only under xunit1
    run(repo, "--junitxml=legacy.xml", "-o", "junit_family=xunit1", "-o", "skills_items=check")
    legacy = (repo.path / "legacy.xml").read_text()
    assert '<property name="skill_check" value="name" />' in legacy


# --- 9. failures and skips point at the test, not at the plugin --------------------------------


HELPER_TESTS = """
import pytest

@pytest.mark.parametrize("helper", ["contains", "expected", "exists"])
def test_helper(skill_workspace, helper):
    ws = skill_workspace("alpha")
    ws.run("echo hello > out/x.txt")
    if helper == "contains":
        ws.assert_output_contains("out/x.txt", "goodbye")
    elif helper == "expected":
        ws.assert_output_matches_expected("out/x.txt", "expected/x.txt")
    else:
        ws.assert_output_exists("out/nothing.txt")
"""


def test_assertion_helpers_show_the_test_frame_only(repo: pytest.Pytester) -> None:
    repo.makepyfile(test_helpers=HELPER_TESTS)
    (repo.path / "expected").mkdir()
    (repo.path / "expected" / "x.txt").write_text("bye\n")
    result = run(repo, "test_helpers.py", "-o", "skills_validate=false")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            '>           ws.assert_output_contains("out/x.txt", "goodbye")',
            "E           AssertionError: output file 'out/x.txt' does not contain 'goodbye';*",
            "test_helpers.py:8: AssertionError",
            '>           ws.assert_output_matches_expected("out/x.txt", "expected/x.txt")',
            "E           AssertionError: output file 'out/x.txt' differs from the expected file*",
            "test_helpers.py:10: AssertionError",
            '>           ws.assert_output_exists("out/nothing.txt")',
            "E           AssertionError: output file 'out/nothing.txt' does not exist; out/ holds:"
            " out/x.txt",
            "test_helpers.py:12: AssertionError",
        ]
    )
    assert "pytest_agent_skills" not in result.stdout.str()


def test_a_missing_runtime_skip_points_at_the_test_and_the_scenario(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    repo.makepyfile(
        test_docker="def test_in_docker(skill_workspace):\n    skill_workspace('alpha')\n"
    )
    result = run(
        repo,
        "test_docker.py",
        ".claude/skills/alpha/evals",
        "-rs",
        "--skills-runtime=docker",
        "--skills-runtime-missing=skip",
    )
    result.assert_outcomes(skipped=2)
    for line in (
        "SKIPPED [[]1[]] test_docker.py:1: skills runtime 'docker' is not available:"
        " cannot reach the Docker engine*",
        "SKIPPED [[]1[]] .claude/skills/alpha/evals/hello.scenario.yaml:1: skills runtime"
        " 'docker' is not available: cannot reach the Docker engine*",
    ):
        result.stdout.fnmatch_lines([line])
    assert "pytest_agent_skills" not in result.stdout.str()


# --- 7. pytest-xdist: a worker parses only the skills whose checks it runs ---------------------

COUNT_PARSES = """
import os
from pytest_agent_skills.skill import Skill

_load = Skill.load.__func__


def _counting_load(cls, directory, *args, **kwargs):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "serial")
    with open(os.path.join(os.environ["PARSE_LOG"], worker), "a") as log:
        log.write(f"{directory}\\n")
    return _load(cls, directory, *args, **kwargs)


Skill.load = classmethod(_counting_load)
"""


def importable_first(folder: Path) -> str:
    """PYTHONPATH with ``folder`` first and what it held after it (a checkout the suite runs
    from under another interpreter stays importable in the subprocess and its workers)."""
    return os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))


def test_each_xdist_worker_parses_only_the_skills_it_checks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    skills = 40
    for index in range(skills):
        write_skill(pytester.path / ".claude" / "skills", f"skill-{index:02d}")
    twin = "name: skill-00\ndescription: D.\n"  # name-duplicate and name-directory
    write_skill(pytester.path / ".claude" / "skills", "zz-twin", front=twin)
    pytester.makeini("[pytest]\nskills_roots = .claude/skills\n")
    pytester.makepyfile(count_parses=COUNT_PARSES)
    log = pytester.mkdir("parses")
    monkeypatch.setenv("PARSE_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", importable_first(pytester.path))
    result = pytester.runpytest_subprocess(*QUIET_PLUGINS, "-p", "count_parses", "-n", "2")
    result.assert_outcomes(passed=skills, failed=1)  # the twin: name-duplicate
    parsed = {path.name: path.read_text().splitlines() for path in log.iterdir()}
    assert sorted(parsed) == ["gw0", "gw1"]
    for worker, directories in parsed.items():
        assert len(directories) == len(set(directories)), f"{worker} parsed a skill twice"
        assert len(directories) < skills + 1, f"{worker} parsed every skill"
    # Each skill about once in all (a skill whose checks the two workers share, twice).
    assert len(parsed["gw0"]) + len(parsed["gw1"]) < 1.5 * (skills + 1)
    assert {Path(d).name for d in parsed["gw0"] + parsed["gw1"]} >= {"skill-00", "zz-twin"}


COUNT_LISTINGS = """
import os
from pytest_agent_skills.listings import FolderListings

_entries = FolderListings.entries


def _counting_entries(self, folder):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "serial")
    with open(os.path.join(os.environ["LISTING_LOG"], worker), "a") as log:
        log.write(f"{folder}\\n")
    return _entries(self, folder)


FolderListings.entries = _counting_entries
"""


def test_each_process_walks_the_skill_roots_once_for_skills_and_scenarios(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The skill and the scenario glue both look for their files under the roots; no scenario
    # here, so that no conversation walks the root again to find its skills.
    root = pytester.path / ".claude" / "skills"
    for name in ("alpha", "beta"):
        write_skill(root, name)
    pytester.makeini("[pytest]\nskills_roots = .claude/skills\n")
    pytester.makepyfile(count_listings=COUNT_LISTINGS)
    log = pytester.mkdir("listings")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite's own worker's name
    monkeypatch.setenv("LISTING_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", importable_first(pytester.path))
    for extra in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess(*QUIET_PLUGINS, "-p", "count_listings", *extra)
        result.assert_outcomes(passed=2 * SKILL_ITEMS)
    # The root folder is listed by walks only (a skill's checks list the skill's own folders).
    walks = {path.name: path.read_text().splitlines().count(str(root)) for path in log.iterdir()}
    assert walks == {"serial": 1, "gw0": 1, "gw1": 1}


WATCH_PARSED_SKILLS = """
import gc
import weakref

import pytest
from pytest_agent_skills.glue.skills_collection import SkillItem

parsed = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    if isinstance(item, SkillItem):
        parsed.setdefault(item.parent.nodeid, weakref.ref(item.parent.skill))
    return outcome


def pytest_sessionfinish(session):
    gc.collect()
    alive = sum(ref() is not None for ref in parsed.values())
    print(f"\\nparsed skills still held: {alive} of {len(parsed)}")
"""


@pytest.mark.parametrize("shape", ["skill", "check"])
def test_a_skill_parsed_for_its_checks_is_let_go_once_they_ran(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """Thousands of parsed skills are not held to the end of the run (nor walked by every
    garbage collection meanwhile); each is parsed once all the same, in either view."""
    for index in range(5):
        write_skill(pytester.path / "skills", f"skill-{index}")
    pytester.makepyfile(count_parses=COUNT_PARSES, watch_parsed_skills=WATCH_PARSED_SKILLS)
    log = pytester.mkdir("parses")
    monkeypatch.setenv("PARSE_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", importable_first(pytester.path))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    plugins = ("-p", "count_parses", "-p", "watch_parsed_skills", "-o", f"skills_items={shape}")
    result = pytester.runpytest_subprocess(*QUIET_PLUGINS, *plugins, "-s")
    result.assert_outcomes(passed=5 if shape == "skill" else 5 * 7)
    result.stdout.fnmatch_lines(["parsed skills still held: 0 of 5"])
    assert len((log / "serial").read_text().splitlines()) == 5


# --- 6. start-up ----------------------------------------------------------------------------


def test_a_glue_module_given_with_p_before_the_plugin_is_not_registered_twice(
    repo: pytest.Pytester,
) -> None:
    # -p names load before the installed plugins, ours included, which registers its glue.
    result = run(repo, "-p", "pytest_agent_skills.glue.scenarios")
    result.assert_outcomes(passed=2 + 2 * SKILL_ITEMS + 1)
