"""pytest glue for mutation runs: with ``skills_mutation_min_score`` set, one ``mutation``
item per collected skill makes its mutants, replays the scenarios that offer it against each
(:func:`pytest_agent_skills.mutate.plan.run_plan`), and fails below the score with the
survivors, each with its diff and a hint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .. import settings
from ..config.mutation import MUTATION_SETTINGS
from ..filenames import SKILL_FILE
from . import FailureTextItem, ItemFailed, usage_errors

ITEM_NAME = "mutation"


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, MUTATION_SETTINGS)


@pytest.hookimpl(tryfirst=True)  # before -k / -m select, as for the other added items
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if settings.value(config, "skills_mutation_min_score") is None:
        return
    from .roots import selected_skill_dirs

    for folder in selected_skill_dirs(session, items):
        skill_file = folder / SKILL_FILE
        shown = os.path.relpath(skill_file, config.rootpath).replace(os.sep, "/")
        items.append(
            MutationItem.from_parent(
                session,
                name=ITEM_NAME,
                nodeid=f"{shown}::{ITEM_NAME}",
                path=skill_file,
                skill_dir=folder,
            )
        )


class MutationItem(FailureTextItem):
    """A skill's mutation score: fails below ``skills_mutation_min_score``."""

    def __init__(self, *, skill_dir: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.skill_dir = skill_dir

    def runtest(self) -> None:
        from ..mutate.plan import MutationPlan, run_plan
        from ..mutate.report import text_report

        values = settings.PluginSettings(self.config)
        with usage_errors():
            plan = MutationPlan.from_settings(self.skill_dir, values)
        outcome = run_plan(plan)
        score, minimum = outcome.report.summary.score, plan.min_score
        assert minimum is not None  # the item exists only with a least score
        if score is not None and score >= minimum:
            return
        raise ItemFailed(
            f"mutation score below {settings.origin(self.config, 'skills_mutation_min_score')}"
            f" {minimum:g}:\n{text_report(outcome.report, outcome.run)}"
        )

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"mutation: {self.skill_dir.name}"
