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
    """The reference venv's python, creating the venv on first use (a few minutes)."""
    directory = venv_dir()
    directory.parent.mkdir(parents=True, exist_ok=True)
    ready = directory / ".ready"
    stamp = "\n".join(REQUIREMENTS)
    with FileLock(str(directory) + ".lock"):
        if ready.is_file() and ready.read_text() == stamp and _python(directory).exists():
            return _python(directory)
        shutil.rmtree(directory, ignore_errors=True)
        python = str(_python(directory))
        if _run([sys.executable, "-m", "venv", str(directory)], directory, required=False):
            install = [python, "-m", "pip", "install"]
        else:
            # A Python without ensurepip (Debian without python3-venv): an empty venv, filled
            # by our own pip pointed at it.
            shutil.rmtree(directory, ignore_errors=True)
            _run([sys.executable, "-m", "venv", "--without-pip", str(directory)], directory)
            install = [sys.executable, "-m", "pip", "--python", python, "install"]
        _run([*install, "--quiet", "--disable-pip-version-check", *REQUIREMENTS], directory)
        _run([python, "-c", IMPORT_CHECK], directory)
        ready.write_text(stamp)
    return _python(directory)


def _run(command: list[str], directory: Path, *, required: bool = True) -> bool:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0 and required:
        raise ReferenceUnavailable(
            f"creating the reference virtualenv at {directory} failed:"
            f" {' '.join(command)} (exit {completed.returncode}):\n{completed.stderr[-3000:]}"
        )
    return completed.returncode == 0
