"""pytest glue for mutation runs: with ``skills_mutation_min_score`` set, a ``mutation`` item
per collected skill runs :func:`pytest_agent_skills.mutate.plan.run_plan` and fails below
the score (thin over :mod:`pytest_agent_skills.mutate`)."""

from __future__ import annotations

import pytest

from .. import settings
from ..config.mutation import MUTATION_SETTINGS


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, MUTATION_SETTINGS)
