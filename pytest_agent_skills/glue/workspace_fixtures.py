"""pytest glue for workspaces: the ``skill_workspace`` fixture, its settings and its marker.

    def test_report(skill_workspace):
        ws = skill_workspace("report-maker", inputs={"data.csv": "a,b\\n1,2\\n"})
        result = ws.run("python3 scripts/report.py inputs/data.csv", output_files=["out/*.md"])
        assert result.exit_code == 0
        ws.assert_output_contains("out/report.md", "| a | b |")
        ws.assert_output_matches_expected("out/report.md", "expected/report.md")

The runtime comes from the ``runtime=`` argument, else the marker
``@pytest.mark.skills_runtime("docker")``, else ``--skills-runtime``.
Everything here is thin over :mod:`pytest_agent_skills.workspace`.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import pytest

from .. import settings
from ..config.runtimes import RUNTIME_SETTINGS, runtime_options
from ..errors import AgentSkillsError
from ..settings import Setting
from ..workspace import RUNTIME_NAMES, RuntimeUnavailableError
from . import expected_files
from .roots import skill_roots

if TYPE_CHECKING:  # the workspace classes and the skill parser load on first use
    from ..skill import Skill
    from ..workspace import ExecSession, RunResult, Runtime, Workspace

MARKER = "skills_runtime"

WORKSPACE_SETTINGS = (
    *RUNTIME_SETTINGS,
    *settings.declare(
        Setting(
            ini="skills_update_expected",
            kind="bool",
            help="write output files into their expected files instead of comparing with them",
        ),
    ),
)

_RUNTIMES_KEY = pytest.StashKey[dict[str, "Runtime | RuntimeUnavailableError"]]()
_HANDLES_KEY = pytest.StashKey[list["SkillWorkspace"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, WORKSPACE_SETTINGS)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(name): run this test's skill_workspace commands in the runtime 'name'"
        f" ({', '.join(RUNTIME_NAMES)})",
    )
    config.stash[_RUNTIMES_KEY] = {}


def pytest_unconfigure(config: pytest.Config) -> None:
    for runtime in config.stash.get(_RUNTIMES_KEY, {}).values():
        if not isinstance(runtime, RuntimeUnavailableError):
            runtime.close()


class SkillWorkspace:
    """One test's workspace for one skill: ``run`` commands, then assert on output files."""

    def __init__(
        self,
        workspace: Workspace,
        skill: Skill,
        base_dir: Path,
        update: bool,
        config: pytest.Config,
    ) -> None:
        self.workspace = workspace
        self.skill = skill
        self.results: list[RunResult] = []
        self.sessions: list[ExecSession] = []
        self._base_dir = base_dir
        self._update = update
        self._config = config  # the session's expected-file ledger is in its stash

    @property
    def path(self) -> Path:
        return self.workspace.path

    @property
    def out_dir(self) -> Path:
        return self.workspace.out_dir

    @property
    def work_dir(self) -> Path:
        return self.workspace.work_dir

    @property
    def inputs_dir(self) -> Path:
        return self.workspace.inputs_dir

    @property
    def runtime(self) -> str:
        return self.workspace.runtime.name

    @property
    def last_result(self) -> RunResult | None:
        return self.results[-1] if self.results else None

    def put_inputs(self, files: Mapping[str, bytes | str | Path]) -> list[Path]:
        return self.workspace.put_inputs(files)

    def run(
        self,
        command: str,
        *,
        output_files: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str = "",
        cwd: str = "",
        allow_skill_writes: bool = False,
    ) -> RunResult:
        """Run ``command`` in the staged skill; fails the test if it changed the skill tree."""
        __tracebackhide__ = True
        result = self.workspace.run(
            self.skill,
            command,
            output_files=output_files,
            env=env,
            timeout=timeout,
            stdin=stdin,
            cwd=cwd,
        )
        self.results.append(result)
        if result.modified_skill_files and not allow_skill_writes:
            pytest.fail(
                f"command {command!r} modified the skill tree of {self.skill.name!r}"
                f" ({self.skill.directory}): {', '.join(result.modified_skill_files)}; skills must"
                " write into $OUTPUT_DIR or $WORK_DIR (pass allow_skill_writes=True to accept)",
                pytrace=False,
            )
        return result

    def exec(
        self,
        command: str,
        *,
        output_files: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str = "",
        cwd: str = "",
        tty: bool = False,
    ) -> ExecSession:
        """Start ``command`` interactively in the staged skill: ``poll``, ``write``, ``result``
        (see docs/workspace.md, ``exec()``); the workspace's end kills it."""
        __tracebackhide__ = True
        session = self.workspace.exec(
            self.skill,
            command,
            output_files=output_files,
            env=env,
            timeout=timeout,
            stdin=stdin,
            cwd=cwd,
            tty=tty,
        )
        self.sessions.append(session)
        return session

    def assert_output_exists(self, name: str) -> Path:
        from ..workspace import assertions

        __tracebackhide__ = True
        return assertions.assert_output_exists(self.path, name)

    def assert_output_contains(self, name: str, text: str) -> str:
        from ..workspace import assertions

        __tracebackhide__ = True
        return assertions.assert_output_contains(self.path, name, text)

    def assert_output_matches(self, name: str, pattern: str) -> Any:
        from ..workspace import assertions

        __tracebackhide__ = True
        return assertions.assert_output_matches(self.path, name, pattern)

    def assert_output_matches_expected(self, name: str, expected: str | Path) -> None:
        """Byte-compare with a stored file (relative to the test file's folder)."""
        from ..workspace import assertions

        __tracebackhide__ = True
        expected_path = expected_files.used(self._config, self._base_dir, expected)
        status = assertions.compare_with_expected(
            self.path, name, expected_path, update=self._update
        )
        expected_files.changed(self._config, expected_path, status.value)

    def __repr__(self) -> str:
        return f"<SkillWorkspace {self.skill.name} {self.runtime} {self.path}>"


def shared_runtime(config: pytest.Config, kind: str) -> Runtime:
    """The session's runtime of ``kind``, made at its first use with the configured options;
    one that is not available fails (or skips) the test asking for it."""
    __tracebackhide__ = True
    try:
        return session_runtime(config, kind)
    except RuntimeUnavailableError as error:
        missing(config, f"skills runtime {kind!r} is not available: {error}")


def session_runtime(config: pytest.Config, kind: str) -> Runtime:
    """The session's runtime of ``kind``, made at its first use with the configured options;
    raises its :class:`RuntimeUnavailableError` (kept: asked again, it is not made again)."""
    runtimes = config.stash[_RUNTIMES_KEY]
    if kind not in runtimes:
        try:
            runtimes[kind] = runtime_options(settings.PluginSettings(config)).create(kind)
        except RuntimeUnavailableError as error:
            runtimes[kind] = error
    runtime = runtimes[kind]
    if isinstance(runtime, RuntimeUnavailableError):
        raise runtime
    return runtime


def missing(config: pytest.Config, message: str) -> NoReturn:
    """A test whose runtime is not available: skipped with ``message`` when
    ``skills_runtime_missing`` says so, else failed."""
    __tracebackhide__ = True
    if runtime_options(settings.PluginSettings(config)).skip_missing:
        # Reported at the test (or the scenario), not at this line of the plugin.
        raise pytest.skip.Exception(message, _use_item_location=True)
    pytest.fail(message + " (or pass --skills-runtime-missing=skip)", pytrace=False)


def runtime_name(item: pytest.Item, explicit: str | None) -> str:
    if explicit is not None:
        name, origin = explicit, "runtime= argument"
    elif (marker := item.get_closest_marker(MARKER)) is not None:
        if len(marker.args) != 1 or marker.kwargs:
            pytest.fail(
                f"@pytest.mark.{MARKER} takes one runtime name, e.g. ('docker')", pytrace=False
            )
        name, origin = marker.args[0], f"@pytest.mark.{MARKER}"
    else:
        return runtime_options(settings.PluginSettings(item.config)).default
    if name not in RUNTIME_NAMES:
        pytest.fail(
            f"{origin}: unknown runtime {name!r} (choose from {', '.join(RUNTIME_NAMES)})",
            pytrace=False,
        )
    return name


def _find_skill(config: pytest.Config, name: str, skills_dir: Path | str | None) -> Skill:
    from ..repository import SkillRepository

    roots = [Path(skills_dir)] if skills_dir is not None else []
    roots += skill_roots(config)
    if not roots:
        pytest.fail(
            f"skill_workspace({name!r}): no skill roots to look in; configure --skills-root /"
            " the skills_roots ini option, or pass skills_dir=... or a Skill",
            pytrace=False,
        )
    try:
        return SkillRepository(roots).get(name)
    except AgentSkillsError as error:
        pytest.fail(
            f"skill_workspace({name!r}): {error} (roots: {', '.join(map(str, roots))})",
            pytrace=False,
        )


class SkillWorkspaceFactory(Protocol):
    """The ``skill_workspace`` fixture: annotate a test's argument with it."""

    def __call__(
        self,
        skill: str | Path | Skill,
        *,
        runtime: str | None = None,
        inputs: Mapping[str, bytes | str | Path] | None = None,
        skills_dir: Path | str | None = None,
    ) -> SkillWorkspace: ...


@pytest.fixture
def skill_workspace(request: pytest.FixtureRequest) -> Iterator[SkillWorkspaceFactory]:
    """A factory: ``skill_workspace(skill, runtime=None, inputs=None, skills_dir=None)``.

    ``skill`` is a skill name (looked up in ``skills_dir`` and the configured
    skill roots), a skill folder (``Path``) or a :class:`Skill`.  Returns a
    :class:`SkillWorkspace`.  Workspaces are removed after the test unless
    ``--skills-keep-workspaces``.
    """
    config = request.config
    WorkspaceFailureReport.register_once(config)
    handles: list[SkillWorkspace] = []
    request.node.stash[_HANDLES_KEY] = handles
    base_dir = request.path.parent
    update = bool(settings.value(config, "skills_update_expected"))

    def factory(
        skill: str | Path | Skill,
        *,
        runtime: str | None = None,
        inputs: Mapping[str, bytes | str | Path] | None = None,
        skills_dir: Path | str | None = None,
    ) -> SkillWorkspace:
        from ..skill import Skill

        if isinstance(skill, Path):
            skill = Skill.load(skill)
        elif isinstance(skill, str):
            skill = _find_skill(config, skill, skills_dir)
        engine = shared_runtime(config, runtime_name(request.node, runtime))
        workspace = engine.create_workspace(request.node.name)
        handle = SkillWorkspace(workspace, skill, base_dir, update, config)
        handles.append(handle)
        workspace.stage_skill(skill)
        if inputs:
            workspace.put_inputs(inputs)
        return handle

    yield factory
    for handle in handles:
        handle.workspace.close()


class WorkspaceFailureReport:
    """Adds each workspace of a failed test (runtime, folder, last command) to its report.

    Registered by the first test of the session that uses ``skill_workspace``: the reports of
    the other tests (skill checks, a suite's plain tests) do not pass through this hook.
    """

    NAME = "agent-skills-workspace-report"

    @classmethod
    def register_once(cls, config: pytest.Config) -> None:
        if not config.pluginmanager.has_plugin(cls.NAME):
            config.pluginmanager.register(cls(), cls.NAME)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        handles = item.stash.get(_HANDLES_KEY, None)
        if report.failed and handles:
            from .run_settings import redacted  # a command's output may print a secret

            for handle in handles:
                described = redacted(item.config, _describe(handle))
                report.sections.append((f"agent-skills workspace {handle.skill.name}", described))
        return report


def _describe(handle: SkillWorkspace) -> str:
    kept = handle.workspace.keep
    lines = [
        f"runtime: {handle.runtime}",
        f"workspace: {handle.path}"
        + ("" if kept else " (removed after the test; keep it with --skills-keep-workspaces)"),
    ]
    for session in handle.sessions:
        lines.append(f"exec session {session.id}: {session.command!r} ({session.status})")
    last = handle.last_result
    if last is None:
        if not handle.sessions:
            lines.append("no command was run")
        return "\n".join(lines)
    lines.append(
        f"last run: exit_code={last.exit_code} timed_out={str(last.timed_out).lower()}"
        f" duration_ms={last.duration_ms}"
    )
    for stream, text in (("stdout", last.stdout), ("stderr", last.stderr)):
        lines += [f"--- {stream} ---", text.rstrip("\n") if text else "(empty)"]
    lines += [f"warning: {warning}" for warning in last.warnings]
    return "\n".join(lines)
