"""Re-record the trigger matrix and the description loop of example_suite/overlap.

A real project records against a real model:
``agent-skills triggers skills --record all --upstream-url https://.../v1 --model my-model``.
This repository must not reach a real model, so a stand-in plays the upstream on a loopback
port: the tests' word-overlap model (bench/support/routing.py), which loads the skill whose
description shares the most words with the query and, asked for a better description, adds
the words of the queries the current one missed.  Everything else (the runs, the cassettes,
the scoring, the held-out split) is what a user's recording goes through.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.support.routing import word_overlap_endpoint  # noqa: E402

OVERLAP = REPO / "example_suite" / "overlap"


def main() -> None:
    shutil.rmtree(OVERLAP / "eval-cassettes", ignore_errors=True)
    out = tempfile.mkdtemp(prefix="example-triggers-")
    with word_overlap_endpoint() as (_model, url):
        for command in (
            ["triggers", "skills", "--min-recall", "0", "--min-precision", "0"],
            ["improve-description", "skills/expense-report"],
        ):
            subprocess.run(
                [sys.executable, "-m", "pytest_agent_skills.cli", *command, "--record", "all",
                 "--upstream-url", url, "--out", out, "-q"],
                cwd=OVERLAP,
                env={**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-stand-in"},
                check=True,
            )  # fmt: skip
    shutil.rmtree(out)
    print(f"recorded {(OVERLAP / 'eval-cassettes').relative_to(REPO)}")


if __name__ == "__main__":
    main()
