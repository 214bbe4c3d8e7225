"""What a test does when a service it needs (Docker, bubblewrap, the reference) is missing.

Elsewhere it skips with the reason. Where the services must exist it fails instead: in CI
(``CI=true``) and under ``scripts/test.sh`` run as root, which sets them up first and then
sets ``PYTEST_AGENT_SKILLS_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

SERVICES_REQUIRED = (
    os.environ.get("CI", "").lower() == "true"
    or os.environ.get("PYTEST_AGENT_SKILLS_REQUIRE_SERVICES") == "1"
)


def missing_service(reason: str) -> NoReturn:
    """Skip with ``reason``, or fail with it where the services are required."""
    if SERVICES_REQUIRED:
        pytest.fail(f"{reason} (a required service: the set-up of scripts/test.sh makes it)")
    pytest.skip(reason)
