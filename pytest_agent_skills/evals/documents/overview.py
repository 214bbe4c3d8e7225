"""The documents over several benchmarks: models.json (the same evals on several models) and
calibration.json (the with-skill configuration against its repeat, an A/A test)."""

from __future__ import annotations

from pydantic import Field

from ...typed_documents import Document, Interval, Part


class ModelFigures(Part):
    """One model's figures of one eval (or of every eval)."""

    with_skill: float = 0.0
    with_skill_ci95: Interval | None = None
    delta: str = ""
    delta_ci95: Interval | None = None
    verdict: str = ""
    tokens: float = 0.0
    time_seconds: float = 0.0


class EvalAcrossModels(Part):
    eval_id: int
    eval_name: str
    models: dict[str, ModelFigures]


class ModelsDocument(Document):
    """models.json of ``agent-skills eval --model A --model B``."""

    NAME = "models"

    skill_name: str = ""
    models: list[str]
    folders: dict[str, str] = Field(description="model -> its output folder below this one")
    configurations: list[str] = Field(default_factory=list)
    overall: dict[str, ModelFigures] = Field(default_factory=dict)
    evals: list[EvalAcrossModels]


class EvalFloor(Part):
    delta_ci95: Interval | None = None
    verdict: str = ""


class CalibrationDocument(Document):
    """calibration.json of ``agent-skills eval --calibrate``."""

    NAME = "calibration"

    skill_name: str | None = None
    executor_model: str | None = None
    grader_model: str | None = None
    runs_per_configuration: int | None = None
    timestamp: str | None = None
    configurations: list[str] = Field(default_factory=list)
    flipped: int = 0
    compared: int = 0
    flip_share: float | None = None
    flip_share_ci95: Interval | None = None
    delta_ci95: Interval | None = None
    verdict: str = ""
    evals: dict[str, EvalFloor] = Field(default_factory=dict)
