"""pytest glue for conversations: ``*.scenario.yaml`` items, the ``skill_agent`` fixture,
record/replay settings, the terminal summary and the skill coverage report.

Everything here is thin over :mod:`pytest_agent_skills.scenario` and
:mod:`pytest_agent_skills.harness`, which work without pytest.  Under
pytest-xdist each worker sends its counts and coverage to the controller
through ``workeroutput``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .. import settings
from ..config.runs import RUN_SETTINGS
from ..errors import AgentSkillsError
from ..filenames import SCENARIO_SUFFIX, SKILL_FILE
from ..settings import Setting
from . import usage_errors
from .junit import printable_node_id, with_testcase_properties
from .roots import relative_path, root_files, selected_root_files, skill_roots
from .run_settings import redacted, run_settings
from .workspace_fixtures import runtime_name, shared_runtime

if TYPE_CHECKING:  # the scenario format (YAML, JSON Schema) loads with the first scenario file
    from typing_extensions import Unpack

    from ..harness.conversation import Conversation, ConversationFields
    from ..harness.coverage import CoverageCollector
    from ..harness.trajectory import Trajectory
    from ..repository import SkillRepository
    from ..scenario import Scenario

_WORKER_KEY = "agent_skills_scenarios"

SCENARIO_SETTINGS = (
    *RUN_SETTINGS,
    *settings.declare(
        Setting(
            ini="skills_coverage",
            kind="bool",
            help="print the skill coverage report (skills loaded, docs selected, scripts run, tools"
            " called) in the terminal summary",
        ),
        Setting(
            ini="skills_coverage_json",
            metavar="PATH",
            help="write the skill coverage report as JSON to PATH",
        ),
        section="scenarios",
    ),
)


class SessionTally:
    """Counts for the terminal summary; plain data (:meth:`to_json`) so xdist workers can send
    it.  (Not a dataclass: this module is imported at every pytest start-up, and the decorator
    generates and compiles the class's methods at import.)"""

    def __init__(self) -> None:
        self.conversations = 0
        self.recorded: dict[str, int] = {}
        self.replayed: dict[str, int] = {}
        self.unused: dict[str, int] = {}

    def add_cassette(self, path: str, recorded: int, replayed: int, unused: int) -> None:
        for table, count in (
            (self.recorded, recorded),
            (self.replayed, replayed),
            (self.unused, unused),
        ):
            if count:
                table[path] = table.get(path, 0) + count

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))

    def merge(self, data: Mapping[str, Any]) -> None:
        self.conversations += data["conversations"]
        for name in ("recorded", "replayed", "unused"):
            table = getattr(self, name)
            for path, count in data[name].items():
                table[path] = table.get(path, 0) + count


_TALLY_KEY = pytest.StashKey[SessionTally]()
_COVERAGE_KEY = pytest.StashKey["CoverageCollector"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, SCENARIO_SETTINGS)


def pytest_configure(config: pytest.Config) -> None:
    if settings.value(config, "skills_upstream_url"):
        with usage_errors():
            # Refuses credentials in the upstream URL and bad limits before any test runs.
            run_settings(config)
    config.stash[_TALLY_KEY] = SessionTally()


def coverage(config: pytest.Config) -> CoverageCollector:
    """The session's :class:`CoverageCollector`, made when a conversation or a report first
    needs it."""
    if _COVERAGE_KEY not in config.stash:
        from ..harness.coverage import CoverageCollector

        config.stash[_COVERAGE_KEY] = CoverageCollector()
    return config.stash[_COVERAGE_KEY]


# --- collection ---------------------------------------------------------------------------------


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    if file_path.name.endswith(SCENARIO_SUFFIX):
        return ScenarioFile.from_parent(
            parent, path=file_path, nodeid=printable_node_id(parent, file_path)
        )
    return None


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselection, like the skills collected from roots
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Scenario files under the skill roots that the walk of the test paths did not reach."""
    found = root_files(config).scenarios
    if not found:
        return
    paths = {item.path for item in items if isinstance(item, ScenarioItem)}
    collected = {path.resolve() for path in paths}  # one resolve() a file, not a scenario
    for path in selected_root_files(session, found):
        resolved = path.resolve()
        if resolved not in collected:
            collected.add(resolved)
            node = ScenarioFile.from_parent(
                session, path=path, nodeid=printable_node_id(session, path)
            )
            items.extend(session.genitems(node))


class ScenarioFile(pytest.File):
    """A ``*.scenario.yaml`` file: one item per scenario."""

    def collect(self) -> list[ScenarioItem]:
        from ..scenario import ScenarioError, load_scenarios

        try:
            scenarios = load_scenarios(self.path)
        except ScenarioError as error:
            raise self.CollectError(str(error)) from None
        return [ScenarioItem.from_parent(self, name=s.name, scenario=s) for s in scenarios]


class ScenarioItem(pytest.Item):
    """One scenario: run the conversation, then check ``expect``."""

    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        if with_testcase_properties(self.config):
            self.user_properties.append(("scenario", scenario.name))

    def runtest(self) -> None:
        scenario = self.scenario
        repository = repository_for(self.config, scenario.skills, scenario.directory)
        run_for_test(self, scenario.conversation(repository, self.title), scenario.runtime)

    @property
    def title(self) -> str:
        shown = relative_path(self.path, self.config.invocation_params.dir)
        return f"scenario {self.scenario.name!r} ({shown}:{self.scenario.line})"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, AgentSkillsError):
            return redacted(self.config, failure_text(excinfo.value, self.title))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.scenario.line - 1, f"scenario: {self.scenario.name}"


def failure_text(error: BaseException, title: str) -> str:
    """The message of a harness failure, with the trajectory so far when there is one."""
    from ..harness.expect import ExpectationError

    if isinstance(error, ExpectationError):
        return str(error)
    text = f"{title}: {type(error).__name__}: {error}"
    trajectory = getattr(error, "trajectory", None)
    if trajectory is not None:
        text += "\n" + trajectory.format()
    return text


# --- running ------------------------------------------------------------------------------------


def run_for_test(node: pytest.Item, conversation: Conversation, runtime: str | None) -> Trajectory:
    """Run ``conversation`` with the session's settings, its commands in the session's
    ``runtime`` (a name; None: the test's marker or the ini default, as ``skill_workspace``
    chooses); count it and feed the coverage (also from a conversation that failed part-way).
    """
    from ..harness.runner import run_conversation

    config = node.config
    session_settings = replace(
        run_settings(config), runtime=shared_runtime(config, runtime_name(node, runtime))
    )
    tally = config.stash[_TALLY_KEY]
    tally.conversations += 1
    use = None
    trajectory = None
    try:
        outcome = run_conversation(conversation, settings=session_settings)
        use, trajectory = outcome.cassette, outcome.trajectory
    except AgentSkillsError as error:
        use = getattr(error, "cassette_use", None)
        trajectory = getattr(error, "trajectory", None)
        raise
    finally:
        if use is not None:
            tally.add_cassette(str(use.path), use.recorded, use.replayed, use.unused)
        if trajectory is not None:
            coverage(config).record(conversation.repository, trajectory)
    return trajectory


def repository_for(
    config: pytest.Config, roots: Sequence[str] | None, directory: Path
) -> SkillRepository:
    """The repository of a conversation: its own ``roots`` (relative to ``directory``, the
    scenario file's or the test module's), or the configured skill roots and the skill that
    holds ``directory``."""
    from ..repository import SkillRepository
    from ..sources import resolve_root

    refresh = bool(settings.value(config, "skills_refresh"))
    if roots is not None:
        return SkillRepository(
            [resolve_root(spec, refresh=refresh, base_dir=directory) for spec in roots]
        )
    found = skill_roots(config)
    enclosing = _enclosing_skill(directory)
    if enclosing is not None and not any(
        enclosing.resolve().is_relative_to(root.resolve()) for root in found
    ):
        found.append(enclosing)
    if not found:
        from ..scenario import ScenarioError

        raise ScenarioError(
            directory,
            None,
            "no skill roots: give 'skills:' in the scenario (paths relative to the file), or"
            " configure --skills-root / the skills_roots ini option",
        )
    return SkillRepository(found)


def _enclosing_skill(directory: Path) -> Path | None:
    """The skill folder holding ``directory`` (a skill's own ``evals/`` or ``tests/``)."""
    for candidate in (directory, *directory.parents):
        if (candidate / SKILL_FILE).is_file():
            return candidate
    return None


# --- the fixture ------------------------------------------------------------------------------


class SkillAgent:
    """Run conversations from a Python test: ``skill_agent.run(user=..., script=[...])``."""

    def __init__(self, node: pytest.Item, test_dir: Path) -> None:
        self.node = node
        self.test_dir = test_dir
        self.trajectories: list[Trajectory] = []

    def run(
        self,
        user: str | None = None,
        *,
        skills: Sequence[str | Path] | str | Path | None = None,
        runtime: str | None = None,
        **fields: Unpack[ConversationFields],
    ) -> Trajectory:
        """The trajectory of one conversation: one ``user`` message, or several ``turns``
        (``{"user": ..., "script": [...], "expect": {...}}`` each), with the fields of a
        :class:`~pytest_agent_skills.harness.Conversation`; ``expect`` (the YAML block as a
        dict) and each turn's ``expect`` are checked.  ``skills`` (roots) and ``cassette`` are
        relative to the test module's folder; ``runtime`` names where commands run."""
        return self.run_conversation(self.conversation(user, skills=skills, **fields), runtime)

    def conversation(
        self,
        user: str | None = None,
        *,
        skills: Sequence[str | Path] | str | Path | None = None,
        **fields: Unpack[ConversationFields],
    ) -> Conversation:
        """The :class:`~pytest_agent_skills.harness.Conversation` :meth:`run` would run,
        for variants (``dataclasses.replace``) or several runs of one conversation."""
        from ..harness.conversation import Conversation

        __tracebackhide__ = True
        if isinstance(skills, (str, Path)):
            skills = [skills]
        roots = [str(root) for root in skills] if skills is not None else None
        cassette = fields.get("cassette")
        if cassette is not None:
            fields["cassette"] = self.test_dir / cassette
        repository = repository_for(self.node.config, roots, self.test_dir)
        return Conversation(repository, user, **fields)

    def run_conversation(
        self, conversation: Conversation, runtime: str | None = None
    ) -> Trajectory:
        """The trajectory of ``conversation``, run with the session's settings; a failed
        conversation fails the test with its message (kept in :attr:`trajectories` too)."""
        from ..harness.errors import HarnessError

        __tracebackhide__ = True
        try:
            trajectory = run_for_test(self.node, conversation, runtime)
        except HarnessError as error:
            failure: HarnessError | None = error
            if error.trajectory is not None:
                self.trajectories.append(error.trajectory)
        else:
            self.trajectories.append(trajectory)
            return trajectory
        # A conversation that went wrong is a test failure: its message (the unmet expectations
        # and the trajectory, or the closest cassette request) says it all. Failed outside the
        # except block, so that the report does not repeat it as a chained exception.
        message = f"{type(failure).__name__}: {failure}"
        pytest.fail(redacted(self.node.config, message), pytrace=False)


@pytest.fixture
def skill_agent(request: pytest.FixtureRequest) -> SkillAgent:
    """Runs scripted or recorded conversations through the skill protocol."""
    return SkillAgent(request.node, Path(request.path).parent)


# --- reporting ----------------------------------------------------------------------------------


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    tally = config.stash[_TALLY_KEY]
    if hasattr(config, "workerinput"):
        config.workeroutput[_WORKER_KEY] = json.dumps(  # type: ignore[attr-defined]
            {
                "tally": tally.to_json(),
                "coverage": coverage(config).skills if tally.conversations else {},
            }
        )
        return
    target = settings.value(config, "skills_coverage_json")
    if target:  # relative to the invocation folder (an absolute path stays as it is)
        coverage(config).write(config.invocation_params.dir / target)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: merge a worker's counts and coverage into the controller's."""
    data = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if data:
        decoded = json.loads(data)
        node.config.stash[_TALLY_KEY].merge(decoded["tally"])
        if decoded["coverage"]:
            coverage(node.config).merge(decoded["coverage"])


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    tally = config.stash[_TALLY_KEY]
    coverage_wanted = settings.value(config, "skills_coverage")
    if not tally.conversations and not coverage_wanted:
        return
    if tally.conversations:
        terminalreporter.write_sep("-", "agent-skills scenarios")
        recorded, replayed = sum(tally.recorded.values()), sum(tally.replayed.values())
        terminalreporter.write_line(f"scenarios run: {tally.conversations}")
        if tally.recorded or tally.replayed or tally.unused:
            terminalreporter.write_line(
                f"cassettes: {len(tally.recorded)} recorded ({recorded} interactions),"
                f" {len(tally.replayed)} replayed ({replayed} interactions),"
                f" {sum(tally.unused.values())} unused interaction(s)"
            )
    if coverage_wanted:
        terminalreporter.write_sep("-", "skill coverage")
        lines = coverage(config).lines() or ["(no conversation ran: no coverage data)"]
        for line in lines:
            terminalreporter.write_line(line)
