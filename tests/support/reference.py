"""Run a script of ``tests/reference/`` with the reference's python (trpc-agent-py 1.2.0).

The reference virtualenv is created on first use (``reference/reference_venv.py``); where it
cannot be, the test is skipped - but never in CI, where that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.services import missing_service

REFERENCE_DIR = Path(__file__).parents[1] / "reference"
sys.path.insert(0, str(REFERENCE_DIR))
from reference_venv import ReferenceUnavailable, ensure_reference_python  # noqa: E402


def run_oracle(
    script: Path, spec: dict[str, Any], scratch: Path, env: Mapping[str, str] | None = None
) -> Any:
    """``script``'s JSON answer to ``spec`` (sent on stdin), run in ``scratch`` as its HOME."""
    try:
        python = ensure_reference_python()
    except ReferenceUnavailable as error:
        missing_service(f"the reference trpc-agent-py 1.2.0 cannot be installed here: {error}")
    environment = {**os.environ, "TMPDIR": str(scratch), "HOME": str(scratch), **(env or {})}
    completed = subprocess.run(
        [str(python), str(script)],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
        cwd=scratch,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout)
