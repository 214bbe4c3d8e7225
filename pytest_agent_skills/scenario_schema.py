"""The JSON Schema of ``*.scenario.yaml`` files, shipped in ``schemas/``: read by the scenario
loader and by the checks of ``expect:`` blocks given from Python."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).parent / "schemas" / "scenario.schema.json"


@cache
def scenario_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema
