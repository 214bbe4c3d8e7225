"""The package's public names resolve, and loading the plugin imports no heavy dependency."""

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import pytest_agent_skills
from pytest_agent_skills import harness

REPOSITORY_ROOT = Path(pytest_agent_skills.__file__).resolve().parent.parent


def assert_is_its_definition(package: ModuleType, name: str) -> None:
    """``package.name`` is the class or function of that name defined in this package, or
    (an upper-case name) a constant tuple of the choices it names; ``dir()`` lists it."""
    value = getattr(package, name)
    if name.isupper():
        assert isinstance(value, tuple) and value, name
        assert all(isinstance(choice, str) for choice in value), value
    else:
        assert (value.__name__, value.__module__.split(".")[0]) == (name, "pytest_agent_skills")
    assert name in dir(package)


@pytest.mark.parametrize("name", pytest_agent_skills.__all__)
def test_every_public_name_resolves_to_its_definition(name: str) -> None:
    assert_is_its_definition(pytest_agent_skills, name)


@pytest.mark.parametrize("name", harness.__all__)
def test_every_public_harness_name_resolves_to_its_definition(name: str) -> None:
    assert_is_its_definition(harness, name)


def test_the_upstream_limits_errors_are_public_harness_errors() -> None:
    assert issubclass(harness.UpstreamTimeoutError, harness.ModelError)
    assert issubclass(harness.UpstreamTooLargeError, harness.ModelError)


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
    assert printed_by_fresh_python(probe) == ""


def test_the_profile_names_known_at_start_up_are_the_profiles() -> None:
    from pytest_agent_skills.rules import PROFILE_NAMES, PROFILES

    assert tuple(PROFILES) == PROFILE_NAMES


#: What `pytest --co` of a folder with one plain test imports of the package: the glue, the
#: settings and the pytest-free layer declaring them, the source options; no rule table, no
#: parser.
START_UP_MODULES = [
    "pytest_agent_skills",
    "pytest_agent_skills._lazy",
    "pytest_agent_skills.audit",
    "pytest_agent_skills.audit.severity",  # the severities: the fail-on setting's choices
    "pytest_agent_skills.config",
    "pytest_agent_skills.config.audit",  # the audit settings, declared; no rule loaded
    "pytest_agent_skills.config.gate",  # the budget and coverage settings, declared
    "pytest_agent_skills.config.mutation",  # the mutation settings, declared
    "pytest_agent_skills.config.roots",
    "pytest_agent_skills.config.runs",
    "pytest_agent_skills.config.runtimes",
    "pytest_agent_skills.config.sources",
    "pytest_agent_skills.config.validation",
    "pytest_agent_skills.errors",
    "pytest_agent_skills.evals",
    "pytest_agent_skills.evals.setup",
    "pytest_agent_skills.evals.setup.eval_settings",  # the eval settings, declared; no options made
    "pytest_agent_skills.evals.triggers",
    "pytest_agent_skills.evals.triggers.trigger_settings",  # the trigger matrix's, likewise
    "pytest_agent_skills.filenames",
    "pytest_agent_skills.glue",
    "pytest_agent_skills.glue.audit",
    "pytest_agent_skills.glue.evals",
    "pytest_agent_skills.glue.expected_files",
    "pytest_agent_skills.glue.junit",
    "pytest_agent_skills.glue.mutation",
    "pytest_agent_skills.glue.roots",
    "pytest_agent_skills.glue.run_settings",
    "pytest_agent_skills.glue.scenarios",
    "pytest_agent_skills.glue.skills_collection",
    "pytest_agent_skills.glue.sources_options",
    "pytest_agent_skills.glue.trigger_matrix",
    "pytest_agent_skills.glue.workspace_fixtures",
    "pytest_agent_skills.httpbounds",  # the recording limits' defaults; imports no httpx
    "pytest_agent_skills.plugin",
    "pytest_agent_skills.rules",
    "pytest_agent_skills.settings",
    "pytest_agent_skills.sources",
    "pytest_agent_skills.sources.options",
    "pytest_agent_skills.workspace",
    "pytest_agent_skills.workspace.errors",
    "pytest_agent_skills.workspace.names",  # runtime names, stage modes: the settings' choices
]
HEAVY = ["yaml", "jsonschema", "openai", "docker", "httpx", "werkzeug", "markdown_it", "mistune"]


def test_a_run_without_skills_imports_no_parser_and_no_heavy_dependency(tmp_path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    probe = (
        "import sys, pytest\n"
        "pytest.main(['--co', '-q', '-p', 'no:cacheprovider',"
        " '-p', 'pytest_agent_skills.plugin'])\n"
        "print('OURS', *sorted(n for n in sys.modules if n.startswith('pytest_agent_skills')))\n"
        f"print('HEAVY', *[n for n in {HEAVY!r} if n in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    lines = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines() if line}
    assert lines["HEAVY"] == []
    assert lines["OURS"] == START_UP_MODULES


def test_loading_the_plugin_adds_no_scan_of_the_installed_distributions(tmp_path) -> None:
    # pytest looks every name of a `pytest_plugins` list up among all installed distributions'
    # entry points (a scan per name, on every run); the plugin registers its glue modules itself.
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")

    def scans(*args: str) -> str:
        probe = (
            "import importlib.metadata, sys, pytest\n"
            "scans = []\n"
            "every = importlib.metadata.distributions\n"
            "importlib.metadata.distributions = lambda **kw: scans.append(1) or every(**kw)\n"
            f"pytest.main(['--co', '-q', '-p', 'no:cacheprovider', *{args!r}])\n"
            "glue = 'pytest_agent_skills.glue.scenarios' in sys.modules\n"
            "print('SCANS', len(scans), 'glue' if glue else 'no glue')\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
        )
        return done.stdout.splitlines()[-1]

    without = scans("-p", "no:agent_skills")
    assert without.endswith(" no glue")
    assert scans() == without.replace(" no glue", " glue")


def test_the_keywords_of_session_run_and_exec_are_their_values_fields() -> None:
    import dataclasses

    from pytest_agent_skills.protocol import SessionOptionFields, SessionOptions
    from pytest_agent_skills.workspace import requests

    for value, keywords in (
        (SessionOptions, SessionOptionFields),
        (requests.RunRequest, requests.RunRequestFields),
        (requests.ExecRequest, requests.ExecRequestFields),
    ):
        fields = {field.name for field in dataclasses.fields(value)}
        assert set(keywords.__annotations__) | _inherited(keywords) == fields, value


def _inherited(keywords: type) -> set[str]:
    return {name for base in keywords.__mro__[1:] for name in getattr(base, "__annotations__", {})}


def test_a_session_takes_its_options_whole_or_as_keywords() -> None:
    from pytest_agent_skills import SessionOptions, SkillRepository, SkillSession

    repository = SkillRepository([])
    whole = SkillSession(repository, SessionOptions(dynamic_tools=True, load_mode="once"))
    keywords = SkillSession(repository, dynamic_tools=True, load_mode="once")
    assert whole.options == keywords.options
    assert keywords.dynamic_tools and keywords.load_mode == "once"
    # Keywords change the options given whole.
    assert SkillSession(repository, whole.options, exec_tools=True).options == SessionOptions(
        dynamic_tools=True, load_mode="once", exec_tools=True
    )


#: The packages whose ``__all__`` a user imports from.
PUBLIC_PACKAGES = (
    "pytest_agent_skills",
    "pytest_agent_skills.harness",
    "pytest_agent_skills.protocol",
    "pytest_agent_skills.workspace",
    "pytest_agent_skills.sources",
    "pytest_agent_skills.rules",
)


#: The jobs of the eval client and their plans, as a user calls them.
JOBS = (
    'benchmark("skill")',
    'models("skill")',
    'triggers("skill")',
    'matrix(["skills"])',
    'improve("skill")',
    'plan_benchmark("skill")',
    'plan_triggers("skill")',
    'plan_matrix(["skills"])',
    'plan_improve("skill")',
)


def test_every_public_name_has_its_own_type_for_a_type_checker(tmp_path: Path) -> None:
    """mypy, as a user's checker, sees each public name as what it is (a lazy name it could not
    follow would be ``Any``).  The package is found on the Python path as an installed one is:
    without its ``py.typed`` mypy would refuse to read it."""
    import importlib

    lines = [f"import {package} as p{i}" for i, package in enumerate(PUBLIC_PACKAGES)]
    names = {}
    for i, package in enumerate(PUBLIC_PACKAGES):
        for name in importlib.import_module(package).__all__:
            lines.append(f"reveal_type(p{i}.{name})")
            names[len(lines)] = f"{package}.{name}"
    # Each job of the eval client returns its typed document; each plan, its text.
    lines.append("client = p0.EvalClient()")
    for job in JOBS:
        lines.append(f"reveal_type(client.{job})")
        names[len(lines)] = f"EvalClient.{job}"
    snippet = tmp_path / "snippet.py"
    snippet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "snippet.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY_ROOT)},
        capture_output=True,
        text=True,
    )
    revealed = {}
    problems = []
    for line in done.stdout.splitlines():
        where, _, message = line.partition(": ")
        number = int(where.split(":")[1]) if where.startswith("snippet.py:") else 0
        if message.startswith("note: Revealed type is "):
            revealed[names[number]] = message.removeprefix("note: Revealed type is ").strip('"')
        elif message.startswith("error:"):
            problems.append(line)
    assert problems == []
    assert set(revealed) == set(names.values())
    assert [name for name, kind in revealed.items() if kind == "Any"] == []
    assert revealed["pytest_agent_skills.SkillSession"].startswith("def (repository: ")
    documents = "pytest_agent_skills.evals.documents."
    assert {job: revealed[f"EvalClient.{job}"] for job in JOBS} == {
        'benchmark("skill")': f"{documents}benchmark_model.BenchmarkDocument",
        'models("skill")': f"{documents}overview.ModelsDocument",
        'triggers("skill")': f"{documents}triggers.TriggerResultsDocument",
        'matrix(["skills"])': f"{documents}triggers.MatrixDocument",
        'improve("skill")': f"{documents}triggers.CandidatesDocument",
        **{job: "str" for job in JOBS if job.startswith("plan_")},
    }
    assert revealed["pytest_agent_skills.harness.Conversation"].endswith(
        "-> pytest_agent_skills.harness.conversation.Conversation"
    )


def test_the_lazy_names_and_their_type_checking_imports_are_one_list() -> None:
    import ast
    import importlib

    packages = ("pytest_agent_skills", "pytest_agent_skills.harness", "pytest_agent_skills.rules")
    for package in packages:
        module = importlib.import_module(package)
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        checked = {
            (node.module, alias.name)
            for block in tree.body
            if isinstance(block, ast.If) and getattr(block.test, "id", "") == "TYPE_CHECKING"
            for node in block.body
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        assert checked == {(source, name) for name, source in module._EXPORTS.items()}, package


def test_a_command_takes_its_request_whole_or_as_keywords(tmp_path: Path) -> None:
    from pytest_agent_skills.workspace import ExecRequest, RunRequest, create_runtime
    from tests.support.workspace import make_skill

    skill = make_skill(tmp_path / "skills")
    request = RunRequest(stdin="from stdin\n", output_files=["out/*.txt"])
    command = "mkdir -p out && cat > out/got.txt && cat out/got.txt"
    with (
        create_runtime("local", work_root=tmp_path / "work") as runtime,
        runtime.create_workspace("whole") as workspace,
    ):
        whole = workspace.run(skill, command, request)
        changed = workspace.run(skill, command, request, stdin="changed\n")
        session = workspace.exec(skill, "head -n 1", ExecRequest(stdin="line\n"))
        chunks = [session.poll(200)]
        while chunks[-1].status == "running" and len(chunks) < 100:
            chunks.append(session.poll(200))
        exec_output = "".join(chunk.output for chunk in chunks)
    assert whole.stdout == "from stdin\n"
    assert [file.name for file in whole.output_files] == ["out/got.txt"]
    assert changed.stdout == "changed\n"
    assert exec_output == "line\n"
