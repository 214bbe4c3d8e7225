"""Skill coverage: which skills, docs, scripts and declared tools the scenarios exercised.

A :class:`CoverageCollector` is fed a repository and a trajectory after each
run, and merges plain JSON data, so that pytest-xdist workers can send their
share to the controller.  Per skill: how many conversations offered it (it was
in their repository) and how many of those loaded it, the docs selected, the
scripts a successful ``skill_run`` (or ``skill_exec``) mentioned in its command, and the tools of
its ``Tools:`` section that the model called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .trajectory import Trajectory

if TYPE_CHECKING:
    from ..protocol.state import Selection


def _empty(skill: Any) -> dict[str, Any]:
    return {
        "name": skill.name,
        "path": str(skill.directory),
        "loaded": False,
        "docs": sorted(skill.docs),
        "docs_selected": [],
        "scripts": sorted(skill.scripts),
        "scripts_ran": [],
        "tools": list(dict.fromkeys(skill.tools)),
        "tools_called": [],
        "scenarios": 0,
        "scenarios_loaded": 0,
    }


class CoverageCollector:
    def __init__(self) -> None:
        #: Keyed by skill folder, so that two roots with the same skill name stay apart.
        self.skills: dict[str, dict[str, Any]] = {}

    def record(self, repository: Any, trajectory: Trajectory) -> None:
        for skill in repository.skills():
            entry = self.skills.setdefault(str(skill.directory), _empty(skill))
            entry["scenarios"] += 1
            loaded, docs = _skill_state(trajectory, skill.name)
            entry["scenarios_loaded"] += loaded
            entry["loaded"] = entry["loaded"] or loaded
            selected = set(entry["docs_selected"])
            for selection in docs:
                selected.update(selection.expand(skill.docs))
            entry["docs_selected"] = sorted(selected)
            ran = set(entry["scripts_ran"])
            called = set(entry["tools_called"])
            for call in trajectory.calls:
                if call.name in entry["tools"]:
                    called.add(call.name)
                arguments = call.arguments or {}
                if (
                    call.name in ("skill_run", "skill_exec")
                    and not call.is_error
                    and arguments.get("skill") == skill.name
                ):
                    command = str(arguments.get("command", ""))
                    ran.update(script for script in skill.scripts if _mentions(command, script))
            entry["scripts_ran"] = sorted(ran)
            entry["tools_called"] = sorted(called)

    def merge(self, data: dict[str, dict[str, Any]]) -> None:
        for key, other in data.items():
            entry = self.skills.setdefault(
                key, dict(other, scenarios=0, scenarios_loaded=0, loaded=False)
            )
            entry["scenarios"] += other["scenarios"]
            entry["scenarios_loaded"] += other["scenarios_loaded"]
            entry["loaded"] = entry["loaded"] or other["loaded"]
            for field in ("docs_selected", "scripts_ran", "tools_called"):
                entry[field] = sorted(set(entry.get(field, [])) | set(other[field]))

    def to_json(self) -> dict[str, Any]:
        return {
            "skills": sorted(self.skills.values(), key=lambda entry: (entry["name"], entry["path"]))
        }

    def write(self, path: Path) -> None:
        """The report written to ``path`` whole or not at all, checked against its model and
        naming its schema."""
        # pydantic is loaded here, at the end of the run, not at plugin start.
        from ..files import write_atomic
        from ..typed_documents import schema_uri
        from .coverage_document import SkillCoverageDocument

        data = self.to_json()
        SkillCoverageDocument.model_validate(data)
        document = {"$schema": schema_uri(SkillCoverageDocument.NAME), **data}
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (json.dumps(document, indent=2) + "\n").encode("utf-8"))

    def lines(self) -> list[str]:
        lines = []
        for entry in self.to_json()["skills"]:
            lines.append(f"{entry['name']}: {_loaded_line(entry)}")
            for label, have, total in (
                ("docs", entry["docs_selected"], entry["docs"]),
                ("scripts", entry["scripts_ran"], entry["scripts"]),
                ("tools", entry["tools_called"], entry["tools"]),
            ):
                if total:
                    missing = [item for item in total if item not in have]
                    detail = f"; never: {', '.join(missing)}" if missing else ""
                    lines.append(f"  {label} {len(have)}/{len(total)}{detail}")
        return lines


def _loaded_line(entry: dict[str, Any]) -> str:
    """How many of the conversations that offered the skill loaded it."""
    offered, loaded = entry["scenarios"], entry["scenarios_loaded"]
    if not loaded:
        return f"NOT loaded by any of the {offered} scenario(s) that offered it"
    return f"loaded by {loaded} of the {offered} scenario(s) that offered it"


def _skill_state(trajectory: Trajectory, name: str) -> tuple[bool, list[Selection]]:
    """Whether the skill was ever loaded, and every docs selection stored for it."""
    # The protocol's own keys and values; imported here, the plugin loads this module at start-up.
    from ..protocol.state import LOADED_VALUE, Selection, StateKeys

    keys = StateKeys(trajectory.load_mode)  # session mode drops the temp: prefix
    loaded_at, docs_at = keys.loaded(name), keys.docs(name)
    loaded = trajectory.state.get(loaded_at) == LOADED_VALUE
    values = [trajectory.state[docs_at]] if docs_at in trajectory.state else []
    for call in trajectory.calls:
        loaded = loaded or call.state_delta.get(loaded_at) == LOADED_VALUE
        if docs_at in call.state_delta:
            values.append(call.state_delta[docs_at])
    selections = [Selection.decode(value) for value in values]
    return loaded, [selection for selection in selections if selection is not None]


def _mentions(command: str, script: str) -> bool:
    """Whether a command names a script by its path in the skill (``scripts/report.py``)."""
    at = command.find(script)
    while at >= 0:
        before = command[at - 1] if at else " "
        if before in " \t/'\"=;&|(":
            return True
        at = command.find(script, at + 1)
    return False
