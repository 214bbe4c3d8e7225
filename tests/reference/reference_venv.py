"""The reference implementation's own virtualenv, created once and reused.

trpc-agent-py 1.2.0 (plus greenlet, which its SQLAlchemy dependency no
longer pulls in) is installed into a separate virtualenv under the user
cache directory, never into our environment.  A ``.ready`` file holding the
requirement list marks a complete venv; a file lock makes concurrent
sessions (xdist workers) wait for one creator.  Override the location with
``AGENT_SKILLS_REFERENCE_VENV``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import platformdirs
from filelock import FileLock

REQUIREMENTS = ("trpc-agent-py==1.2.0", "greenlet")
IMPORT_CHECK = "import trpc_agent_sdk.skills, trpc_agent_sdk.agents"


class ReferenceUnavailable(Exception):
    """The reference virtualenv could not be created (no registry reachable, install failed)."""


def venv_dir() -> Path:
    configured = os.environ.get("AGENT_SKILLS_REFERENCE_VENV")
    if configured:
        return Path(configured)
    return Path(platformdirs.user_cache_dir("pytest-agent-skills")) / "reference-venv"


def _python(directory: Path) -> Path:
    return directory / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_reference_python() -> Path:
    """The reference venv's python, creating the venv on first use (a minute or two)."""
    directory = venv_dir()
    directory.parent.mkdir(parents=True, exist_ok=True)
    ready = directory / ".ready"
    stamp = "\n".join(REQUIREMENTS)
    with FileLock(str(directory) + ".lock"):
        if ready.is_file() and ready.read_text() == stamp and _python(directory).exists():
            return _python(directory)
        shutil.rmtree(directory, ignore_errors=True)
        steps = [
            [sys.executable, "-m", "venv", str(directory)],
            [str(_python(directory)), "-m", "pip", "install", "--quiet", *REQUIREMENTS],
            [str(_python(directory)), "-c", IMPORT_CHECK],
        ]
        for command in steps:
            completed = subprocess.run(command, capture_output=True, text=True, check=False)
            if completed.returncode != 0:
                raise ReferenceUnavailable(
                    f"creating the reference virtualenv at {directory} failed at"
                    f" {' '.join(command[1:4])}... (exit {completed.returncode}):\n"
                    f"{completed.stderr[-3000:]}"
                )
        ready.write_text(stamp)
    return _python(directory)
