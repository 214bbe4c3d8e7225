"""pytest glue of the trigger matrix: with ``skills_trigger_matrix = true``, one item runs
every trigger query of the skills the session collected, with all of those skills offered,
replayed from the eval cassettes, and fails when a skill is below the recall or precision
bar (the library is :mod:`pytest_agent_skills.evals.triggers.matrix`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .. import settings
from ..errors import AgentSkillsError, ConfigurationError
from ..evals.triggers.trigger_settings import TRIGGER_SETTINGS
from .evals import _EvalItem  # the eval items' failure text and report line

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
        item = TriggerMatrixItem.from_parent(
            session, name=ITEM_NAME, skill_dirs=folders
        )
        items.append(item)


class MatrixFailed(AgentSkillsError):
    """A skill below a bar of the trigger matrix; the message is the failure text."""


class TriggerMatrixItem(_EvalItem):
    """The trigger matrix of the collected skills: fails when a skill misses a bar."""

    def __init__(self, *, skill_dirs: list[Path], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.skill_dirs = skill_dirs

    def runtest(self) -> None:
        from ..evals.commands.triggers_command import matrix_bars
        from ..evals.setup.eval_options import eval_options
        from ..evals.triggers.matrix import MatrixRequest, run_matrix, unmeasured
        from ..evals.triggers.matrix_scores import false_triggers_text

        values = settings.PluginSettings(self.config)
        try:
            request = MatrixRequest(
                tuple(self.skill_dirs), eval_options(values), matrix_bars(values)
            )
        except ConfigurationError as error:
            raise pytest.UsageError(str(error)) from None
        document = run_matrix(request).document
        short, summary = document["summary"]["below_bar"], document["summary"]
        never = unmeasured(document)
        if not short and not summary["errors"] and not never:
            return
        lines = [
            f"{len(short)} of {summary['skills']} skills below a bar (recall"
            f" {document['min_recall']:g}, precision {document['min_precision']:g}):"
        ]
        for name, problems in short.items():
            shown = false_triggers_text(document["per_skill"][name])
            lines.append(
                f"- {name}: {'; '.join(problems)}"
                + (f"; false triggers: {shown}" if shown else "")
            )
        lines.extend(
            f"collision: {item['a']} <-> {item['b']}: {item['count']} runs"
            for item in document["collisions"][:3]
        )
        if summary["errors"]:
            first = next(query for query in document["queries"] if query["errors"])
            lines.append(
                f"{summary['errors']} of {summary['runs']} runs failed; first"
                f" ({first['owner']}: {first['query']!r}): {first['error_messages'][0]}"
            )
        if never:
            lines.append(
                f"{len(never)} quer(ies) with no run made: the token budget (--max-tokens) was"
                f" spent ({summary['runs_skipped']} run(s) skipped); first ({never[0]['owner']}:"
                f" {never[0]['query']!r})"
            )
        raise MatrixFailed("\n".join(lines))
