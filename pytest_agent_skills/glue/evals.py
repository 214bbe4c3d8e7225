"""pytest glue of skill evals: a skill's ``evals/evals.json`` is one item per eval, its
``evals/triggers.json`` one item; each replays from the eval cassettes by default and fails
below the bars with the per-run table (the library is :mod:`pytest_agent_skills.evals`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .. import settings
from ..errors import AgentSkillsError
from ..evals.setup.eval_settings import EVAL_SETTINGS
from . import FailureTextItem, ItemFailed
from .roots import skill_dir_of
from .workspace_fixtures import missing, session_runtime

if TYPE_CHECKING:
    from ..evals.client.eval_client import EvalClient

EVALS_NAME, TRIGGERS_NAME = "evals.json", "triggers.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, EVAL_SETTINGS)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    # An evals.json or a triggers.json in the evals/ folder of a skill.
    if file_path.name not in (EVALS_NAME, TRIGGERS_NAME) or skill_dir_of(file_path) is None:
        return None
    kind = EvalsFile if file_path.name == EVALS_NAME else TriggersFile
    return kind.from_parent(parent, path=file_path)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """The eval files of skills under the skill roots (dot-folders pytest does not walk)."""
    from .roots import root_files, selected_root_files

    collected = {
        item.path.resolve() for item in items if isinstance(item, (EvalItem, TriggersItem))
    }
    for path in selected_root_files(session, _root_eval_files(root_files(config).skills)):
        if path.resolve() not in collected:
            kind = EvalsFile if path.name == EVALS_NAME else TriggersFile
            items.extend(session.genitems(kind.from_parent(session, path=path)))


def _root_eval_files(skills: list[tuple[Path, Path]]) -> Iterator[tuple[Path, Path]]:
    for root, skill_file in skills:
        for name in (EVALS_NAME, TRIGGERS_NAME):
            path = skill_file.parent / "evals" / name
            if os.path.isfile(path):
                yield root, path


def _client(node: pytest.Item) -> EvalClient:
    """The client of the session's settings, the model's commands in the session's runtime
    of that name (the one :func:`~pytest_agent_skills.evals.setup.eval_runtime.choose_runtime`
    picks)."""
    from ..evals.client.eval_client import EvalClient
    from ..evals.setup.eval_runtime import EvalRuntimeError, choose_runtime

    config = node.config
    # A bad setting raises ConfigurationError: a typed error, so the item fails with its
    # message (the file, the setting, what it needs), never a traceback.
    client = EvalClient.from_settings(settings.PluginSettings(config))
    options = client.options
    try:
        runtime = choose_runtime(options.runtime, lambda kind: session_runtime(config, kind))
    except EvalRuntimeError as error:
        missing(config, str(error))
    return replace(client, options=replace(options, run=replace(options.settings, runtime=runtime)))


class EvalsFile(pytest.File):
    """A skill's ``evals/evals.json``: one item per eval."""

    def collect(self) -> list[pytest.Item]:
        from ..evals.setup.eval_files import EvalFileError, load_evals
        from ..skill import Skill

        try:
            evals = load_evals(self.path.parent.parent, Skill.load(self.path.parent.parent).name)
        except (EvalFileError, AgentSkillsError) as error:
            raise self.CollectError(str(error)) from None
        return [
            EvalItem.from_parent(self, name=f"eval {case.id}: {case.title}", eval_id=case.id)
            for case in evals.evals
        ]


class TriggersFile(pytest.File):
    """A skill's ``evals/triggers.json``: one item for all its queries."""

    def collect(self) -> list[pytest.Item]:
        return [TriggersItem.from_parent(self, name="triggers")]


class EvalItem(FailureTextItem):
    """One eval: its runs in every configuration, replayed; fails below the bars."""

    def __init__(self, *, eval_id: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.eval_id = eval_id

    def runtest(self) -> None:
        from ..evals.client.eval_client import BenchmarkSpec
        from ..evals.verdicts.results_view import results_view, run_table

        skill = self.path.parent.parent
        view = results_view(_client(self).benchmark(skill, BenchmarkSpec(only=(self.eval_id,))))
        shown = view.evals[0]
        if shown.meets_bar:
            return
        lines = [
            shown.below_bar(),
            f"pass rate: {shown.rates}; delta {shown.delta}",
            shown.evidence,
            *(f"- {item.text!r} {item.failed_in}" for item in view.failing(shown.eval_id)),
            run_table(view.runs),
            view.first_error(),
        ]
        raise ItemFailed("\n".join(line for line in lines if line))


class TriggersItem(FailureTextItem):
    """Every query of ``evals/triggers.json``: fails when one misses its bar."""

    def runtest(self) -> None:
        from ..evals.triggers.trigger_text import triggers_text

        text = triggers_text(_client(self).triggers(self.path.parent.parent))
        if text.failed:
            raise ItemFailed(text.failure())
