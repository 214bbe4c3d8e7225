"""Expected files (``assert_output_matches_expected``): which were created, updated, used, and
which no test used, in the terminal summary (as syrupy reports unused snapshots).

An expected file given relative to the test file (``expected/report.md``) belongs to the
folder of its first part (``expected/``), one outside the test file's folder
(``../shared/report.md``) to none; the files of such folders that no comparison used
are reported under ``--skills-update-expected``, and only after a run of every test that
passed (no path, ``-k``, ``-m`` or failure: a test that did not run, or stopped early, leaves
its files unused), leaving out a folder that holds test modules.  They are reported, never
deleted.  Under pytest-xdist each worker sends its share to the controller.
"""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path
from typing import Any

import pytest

from .. import settings

_WORKER_KEY = "agent_skills_expected"


class ExpectedLedger:
    """Plain data (:meth:`to_json`), so that xdist workers can send it.  (Not a dataclass:
    this module is imported at every pytest start-up, and the decorator generates and compiles
    the class's methods at import.)"""

    _LISTS = ("created", "updated", "used", "folders")

    def __init__(self) -> None:
        self.created: list[str] = []
        self.updated: list[str] = []
        self.used: list[str] = []
        self.folders: list[str] = []
        self.narrowed = False

    def to_json(self) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in self._LISTS}, "narrowed": self.narrowed}

    def merge(self, data: dict[str, Any]) -> None:
        for name in self._LISTS:
            getattr(self, name).extend(data[name])
        self.narrowed = self.narrowed or data["narrowed"]

    def unused(self, test_file_patterns: list[str]) -> tuple[list[Path], list[Path]]:
        """The files of the expected-files folders no comparison used, and the folders left
        out because they hold test modules (``tests/x.txt`` given from the project's root
        makes ``tests/`` such a folder: its test files are not expected files)."""
        used = {Path(path) for path in self.used}
        found: set[Path] = set()
        test_folders: list[Path] = []
        for folder in sorted({Path(folder) for folder in self.folders}):
            files = [path for path in folder.rglob("*") if path.is_file()]
            if any(_is_test_module(path.name, test_file_patterns) for path in files):
                test_folders.append(folder)
            else:
                found.update(path for path in files if path not in used)
        return sorted(found), test_folders


def _is_test_module(name: str, patterns: list[str]) -> bool:
    return name == "conftest.py" or any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


_LEDGER_KEY = pytest.StashKey[ExpectedLedger]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_LEDGER_KEY] = ExpectedLedger()


def used(config: pytest.Config, base_dir: Path, expected: str | Path) -> Path:
    """Note a comparison with ``expected`` (as the test gave it: absolute, or relative to the
    test file's folder ``base_dir``); returns its path."""
    ledger = config.stash[_LEDGER_KEY]
    given = Path(expected)
    path = given if given.is_absolute() else base_dir / given
    ledger.used.append(os.path.abspath(path))
    parts = () if given.is_absolute() else Path(os.path.normpath(given)).parts
    # Never a folder above the test file's: ../ would make every file of the project unused.
    if len(parts) > 1 and parts[0] != os.pardir:
        ledger.folders.append(os.path.abspath(base_dir / parts[0]))
    return path


def changed(config: pytest.Config, path: Path, status: str) -> None:
    """Note that the comparison created or updated ``path`` (``status`` "same": neither)."""
    if status in ("created", "updated"):
        getattr(config.stash[_LEDGER_KEY], status).append(os.path.abspath(path))


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[_LEDGER_KEY].narrowed = True


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput"):
        config.workeroutput[_WORKER_KEY] = json.dumps(  # type: ignore[attr-defined]
            config.stash[_LEDGER_KEY].to_json()
        )


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: merge a worker's expected files into the controller's."""
    data = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if data:
        node.config.stash[_LEDGER_KEY].merge(json.loads(data))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    ledger = config.stash.get(_LEDGER_KEY, None)
    update = bool(settings.value(config, "skills_update_expected"))
    if ledger is None or not (ledger.created or ledger.updated or (update and ledger.folders)):
        return
    terminalreporter.write_sep("-", "agent-skills expected files")

    def shown(path: str | Path) -> str:
        return os.path.relpath(path, config.rootpath)

    for status in ("created", "updated"):
        for path in getattr(ledger, status):
            terminalreporter.write_line(f"{status}: {shown(path)}")
    counts = f"{len(ledger.created)} expected files created, {len(ledger.updated)} updated"
    if not update:
        terminalreporter.write_line(counts)
        return
    complete = (
        not ledger.narrowed
        and config.args_source != pytest.Config.ArgsSource.ARGS
        and not terminalreporter.stats.get("failed")
        and not terminalreporter.stats.get("error")
    )
    if not complete:
        terminalreporter.write_line(
            counts + "; unused expected files are looked for only after a run of every test that"
            " passed (no path, -k, -m or failure)"
        )
        return
    unused, test_folders = ledger.unused(config.getini("python_files"))
    for path in unused:
        terminalreporter.write_line(f"unused: {shown(path)}")
    for folder in test_folders:
        terminalreporter.write_line(
            f"not searched for unused files: {shown(folder)}/ (it holds test modules; keep"
            " expected files in a folder of their own)"
        )
    advice = " (no test compared an output with them: delete them, or compare)" if unused else ""
    terminalreporter.write_line(f"{counts}, {len(unused)} unused{advice}")
