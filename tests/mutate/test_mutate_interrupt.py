"""Ctrl-C in the middle of ``agent-skills mutate``: the skill is byte-identical, no temporary
copy, workspace or process is left, and the command says so with exit status 130."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.support.mutation import SKILL, folder_bytes, mutate_process, mutation_project

pytestmark = pytest.mark.usefixtures("clean_settings_env")


def _mutant_copies(tmp: Path) -> list[Path]:
    return [path for path in tmp.glob("agent-skills-mutate-*/M*") if path.is_dir()]


def test_sigint_leaves_the_skill_as_it_was_and_no_temporary_copy(tmp_path: Path) -> None:
    project = mutation_project(tmp_path / "project", "strong")
    before = folder_bytes(project)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process = mutate_process(SKILL, "--jobs", "2", cwd=project, tmp=tmp)
    deadline = time.monotonic() + 120
    while not _mutant_copies(tmp):  # mutants are being checked: copies exist
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no mutant copy appeared"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err.decode()
    assert b"interrupted; the skill's files were not changed" in err
    assert b"Traceback" not in err
    assert folder_bytes(project) == before
    assert list(tmp.iterdir()) == []  # no copy, no workspace, nothing half-removed
