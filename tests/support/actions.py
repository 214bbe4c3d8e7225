"""A composite GitHub Action run as the runner runs it, on this machine: each step's ``if``
decided, its ``${{ }}`` expressions filled in (inputs, ``github.*``, earlier steps' outputs),
each ``run`` script run by ``bash -e`` in the step's working folder with the ``GITHUB_*``
environment and files the runner sets (``GITHUB_OUTPUT`` a new file per step, read back as
that step's outputs; ``GITHUB_STEP_SUMMARY``, ``GITHUB_WORKSPACE``, ``RUNNER_TEMP``).  A
``uses`` step (another action: set-up, an upload) is not run: it is recorded with its
filled-in ``with`` for the test to check."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class StepRun:
    """One step as it ran: its name, whether it ran, its status, outputs and output text."""

    name: str
    ran: bool
    status: int = 0
    outputs: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    uses: str = ""
    with_: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    """The steps of one run, and whether the job failed."""

    steps: list[StepRun]

    @property
    def failed(self) -> bool:
        return any(step.ran and step.status != 0 for step in self.steps)

    def step(self, name: str) -> StepRun:
        return next(step for step in self.steps if step.name == name)


class _Context:
    def __init__(self, inputs: Mapping[str, str], github: Mapping[str, str]) -> None:
        self.inputs = dict(inputs)
        self.github = dict(github)
        self.steps: dict[str, dict[str, str]] = {}
        self.failed = False

    def value(self, term: str) -> Any:
        term = term.strip()
        if term == "always()":
            return True
        if term == "success()":
            return not self.failed
        if term.startswith("'") and term.endswith("'"):
            return term[1:-1].replace("''", "'")
        parts = term.split(".")
        if parts[0] == "inputs":
            return self.inputs[parts[1]]
        if parts[0] == "github":
            return self.github[parts[1]]
        if parts[0] == "steps" and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        raise AssertionError(f"the test runner does not know the expression {term!r}")

    def evaluate(self, expression: str) -> Any:
        """``a && b``, ``x == 'y'``, ``x != 'y'`` and plain terms (what action.yml uses)."""
        results = []
        for part in expression.split("&&"):
            for operator in ("==", "!="):
                if operator in part:
                    left, right = part.split(operator)
                    same = str(self.value(left)) == str(self.value(right))
                    results.append(same if operator == "==" else not same)
                    break
            else:
                results.append(self.value(part))
        return all(bool(result) for result in results)

    def fill(self, text: Any) -> str:
        return _EXPRESSION.sub(lambda match: str(self.value(match.group(1))), str(text))

    def should_run(self, condition: Any) -> bool:
        if condition is None:
            return not self.failed
        expression = _EXPRESSION.sub(lambda match: match.group(1), str(condition))
        if "always()" not in expression and "failure()" not in expression and self.failed:
            return False
        return bool(self.evaluate(expression))


def read_outputs(path: Path) -> dict[str, str]:
    """The ``name=value`` and ``name<<DELIMITER`` outputs a step wrote to ``GITHUB_OUTPUT``."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            outputs[name] = "\n".join(lines[index + 1 : end])
            index = end + 1
            continue
        name, _sep, value = line.partition("=")
        outputs[name] = value
        index += 1
    return outputs


def run_action(
    action_dir: Path,
    workspace: Path,
    inputs: Mapping[str, str],
    runner_temp: Path,
    env: Mapping[str, str] | None = None,
) -> ActionRun:
    """Run the composite action of ``action_dir/action.yml`` in ``workspace`` with ``inputs``
    (the others take their defaults)."""
    action = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    declared = action.get("inputs", {})
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    values.update(inputs)
    summary = runner_temp / "step_summary.md"
    github = {"action_path": str(action_dir), "workspace": str(workspace)}
    context = _Context(values, github)
    base_env = {
        **os.environ,
        **(env or {}),
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(action_dir),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(runner_temp),
    }
    steps: list[StepRun] = []
    for number, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {number}")
        if not context.should_run(step.get("if")):
            steps.append(StepRun(name, ran=False))
            continue
        if "uses" in step:
            filled = {key: context.fill(value) for key, value in step.get("with", {}).items()}
            steps.append(StepRun(name, ran=True, uses=step["uses"], with_=filled))
            continue
        assert step.get("shell") == "bash", f"{name}: the steps run with shell: bash"
        output_file = runner_temp / f"output-{number}"
        script = runner_temp / f"step-{number}.sh"
        script.write_text(context.fill(step["run"]) + "\n", encoding="utf-8")
        step_env = {key: context.fill(value) for key, value in step.get("env", {}).items()}
        folder = context.fill(step.get("working-directory", str(workspace)))
        done = subprocess.run(
            # What the runner runs for shell: bash.
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=folder,
            env={**base_env, **step_env, "GITHUB_OUTPUT": str(output_file)},
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        outputs = read_outputs(output_file)
        if "id" in step:
            context.steps[step["id"]] = outputs
        context.failed = context.failed or done.returncode != 0
        steps.append(StepRun(name, True, done.returncode, outputs, done.stdout, done.stderr))
    return ActionRun(steps)
