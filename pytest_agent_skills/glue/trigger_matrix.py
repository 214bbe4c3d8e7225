"""pytest glue of the trigger matrix: with ``skills_trigger_matrix = true``, one item runs
every trigger query of the skills the session collected, with all of those skills offered,
replayed from the eval cassettes, and fails when a skill is below the recall or precision
bar (the library is :mod:`pytest_agent_skills.evals.triggers.matrix`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .. import settings
from ..evals.triggers.trigger_settings import TRIGGER_SETTINGS
from . import FailureTextItem, ItemFailed

ITEM_NAME = "skills trigger matrix"


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, TRIGGER_SETTINGS)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """One matrix item over the skills this run selected: those of the collected SKILL.md
    and eval files, and those under the skill roots.  First among the hooks, so that ``-k``
    and ``-m`` select it like any item."""
    if not settings.value(config, "skills_trigger_matrix"):
        return
    from .roots import selected_skill_dirs

    folders = selected_skill_dirs(session, items)
    if folders:
        items.append(TriggerMatrixItem.from_parent(session, name=ITEM_NAME, skill_dirs=folders))


class TriggerMatrixItem(FailureTextItem):
    """The trigger matrix of the collected skills: fails when a skill misses a bar."""

    def __init__(self, *, skill_dirs: list[Path], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.skill_dirs = skill_dirs

    def runtest(self) -> None:
        from ..evals.client.eval_client import EvalClient
        from ..evals.verdicts.matrix_text import matrix_text

        # A bad setting's ConfigurationError fails the item with its message (FailureTextItem).
        client = EvalClient.from_settings(settings.PluginSettings(self.config))
        text = matrix_text(client.matrix(self.skill_dirs))
        if text.failed:
            raise ItemFailed(text.failure())
