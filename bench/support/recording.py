"""The eval options of a test or a bench script against a loopback endpoint: recording
everything from it, or replaying what was recorded (fast retries, the local runtime)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_agent_skills.evals.setup.eval_options import EvalOptions, RetryPolicy
from pytest_agent_skills.harness import RunSettings, Upstream


def recording(url: str, base_dir: Path, **changes: Any) -> EvalOptions:
    """Options that record everything from ``url`` (fast retries), the commands on the local
    runtime (tests of the runtime choice pass ``runtime=None`` or a name)."""
    options = EvalOptions(
        run=RunSettings(
            record_mode="all", upstream=Upstream(url, "sk-test"), model_name="fake-agent"
        ),
        grader_model="fake-grader",
        runs=4,
        jobs=4,
        retry=RetryPolicy(attempts=3, base_delay=0.01),
        base_dir=base_dir,
        runtime="local",
    )
    return replace(options, **changes)


def replaying(base_dir: Path, **changes: Any) -> EvalOptions:
    options = EvalOptions(
        run=RunSettings(model_name="fake-agent"),
        grader_model="fake-grader",
        runs=4,
        base_dir=base_dir,
        runtime="local",
    )
    return replace(options, **changes)
