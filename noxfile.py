"""The pytest-facing checks on the oldest pytest this package supports and on the newest.

``scripts/test.sh`` runs the whole suite against the pytest installed beside it; these sessions
run what depends on pytest's own API again in a virtualenv of their own, once per end of the
supported range: ``mypy --strict`` (pytest's annotations change between releases) and the
tests marked ``pytest_facing`` (plugin, collection and scenario items, everything that runs
pytest inside pytest through ``pytester``).

Run both with ``python3 -m nox``, one with ``python3 -m nox -s "pytest_facing(oldest)"``;
arguments after ``--`` go to pytest.
"""

from __future__ import annotations

import nox

#: The lower bound of ``pytest`` in pyproject.toml's dependencies, and pip's newest release.
PYTEST_RANGE = {"oldest": "pytest==8.4.*", "newest": "pytest"}

nox.options.sessions = ["pytest_facing"]
nox.options.error_on_missing_interpreters = True


@nox.session
@nox.parametrize("end", list(PYTEST_RANGE), ids=list(PYTEST_RANGE))
def pytest_facing(session: nox.Session, end: str) -> None:
    # Editable, so that the code checked is this checkout's.
    session.install("-e", ".[test]", PYTEST_RANGE[end])
    shown = session.run("python", "-m", "pytest", "--version", silent=True)
    if shown is None:  # nox --install-only
        return
    version = str(shown).strip()
    session.log(f"{end} end of the range: {version}")
    if end == "oldest" and not version.startswith("pytest 8.4."):
        session.error(f"the oldest end runs {version}, not {PYTEST_RANGE[end]}")
    session.run("python", "-m", "mypy", "--strict", "pytest_agent_skills")
    # The real model server is built into the system's python only, and says nothing of
    # pytest's API.
    selected = "pytest_facing and not realmodel"
    session.run("python", "-m", "pytest", "-m", selected, "-p", "no:cacheprovider",
                *session.posargs)
