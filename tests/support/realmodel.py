"""The real model server for the tests (the server itself: :mod:`bench.support.realmodel`).

``real_model`` is session-scoped: one server for every test that asks for it, started on a free
loopback port and stopped at the end of the session. Import it into the test module and mark
the tests ``realmodel``. Where the server cannot start it skips with the reason (fails where
services are required, see :mod:`tests.support.services`). A test that fails shows the server's
log lines written while it ran (a section of its report, by the hook below, which
``tests/conftest.py`` loads as a plugin).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from bench.support.realmodel import RealModel, start_server, stop_server, unavailable
from tests.support.services import missing_service

#: The server of this session, once started: the report hook reads its log.
_RUNNING: list[RealModel] = []
_LOG_START = pytest.StashKey[int]()


def require_real_model() -> None:
    """Skip (or fail where the services are required) when the server cannot start here."""
    reason = unavailable()
    if reason is not None:
        missing_service(reason)


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealModel]:
    """The real model server, started once for the session (see the module's text)."""
    require_real_model()
    log = tmp_path_factory.mktemp("real-model") / "server.log"
    try:
        server = start_server(log)
    except RuntimeError:
        try:  # once more: another process may have taken the free port first
            server = start_server(log)
        except RuntimeError as error:
            missing_service(str(error))
    _RUNNING.append(server)
    try:
        yield server
    finally:
        _RUNNING.remove(server)
        stop_server(server)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test that used the server shows the server's log lines of its run."""
    report = yield
    if not _RUNNING or "real_model" not in getattr(item, "fixturenames", ()):
        return report
    server = _RUNNING[-1]
    if call.when == "setup":
        with contextlib.suppress(OSError):
            item.stash[_LOG_START] = server.log.stat().st_size
    elif report.failed:
        start = item.stash.get(_LOG_START, 0)
        report.sections.append(
            (f"real model server log ({server.log})", server.log_tail(start) or "(empty)")
        )
    return report
