"""The documents of which skill fires: triggers.json of ``eval --triggers`` (one skill's
trigger rates), triggers-matrix.json of ``triggers`` (every skill offered) and
description-candidates.json of ``improve-description``."""

from __future__ import annotations

from pydantic import Field

from ...typed_documents import Document, Part
from .benchmark_model import GitVersion


class TriggerResult(Part):
    """One trigger query's rate: how many runs loaded the skill."""

    query: str
    should_trigger: bool
    trigger_rate: float
    triggers: int = 0
    runs: int = 0
    errors: int = 0
    error_messages: list[str] = Field(default_factory=list)
    skipped: int = 0
    passed: bool = Field(alias="pass")


class Totals(Part):
    total: int
    passed: int
    failed: int


class TriggerResultsDocument(Document):
    """triggers.json of ``agent-skills eval --triggers``."""

    NAME = "trigger-results"

    skill_name: str = ""
    description: str = ""
    model: str = ""
    threshold: float | None = None
    runs_per_query: int | None = None
    runtime: str = ""
    results: list[TriggerResult]
    summary: Totals | None = None


class MatrixQuery(Part):
    """One query of the matrix: which skill each of its runs loaded first (or ``none``)."""

    query: str
    owner: str
    should_trigger: bool
    runs: int = 0
    loaded: dict[str, int]
    errors: int = 0
    error_messages: list[str] = Field(default_factory=list)
    skipped: int = 0


class SkillScore(Part):
    """One skill's scores; None where there is nothing to measure them on."""

    precision: float | None = None
    recall: float | None = None
    false_triggers: dict[str, int] = Field(default_factory=dict)
    own_false_triggers: int = 0
    hits: int | None = None
    should_trigger_runs: int | None = None
    missed_to_none: int | None = None
    wrong_loads: int | None = None
    took_from: dict[str, int] = Field(default_factory=dict)


class Collision(Part):
    """Two skills that take each other's queries."""

    a: str
    b: str
    count: int
    a_took_b: int = 0
    b_took_a: int = 0


class MatrixSummary(Part):
    skills: int | None = None
    queries: int | None = None
    runs: int | None = None
    errors: int = 0
    runs_skipped: int = 0
    below_bar: dict[str, list[str]] = Field(default_factory=dict)
    time_seconds: float | None = None


class MatrixDocument(Document):
    """triggers-matrix.json of ``agent-skills triggers``."""

    NAME = "triggers-matrix"

    skills: list[str]
    model: str = ""
    runs_per_query: int = 0
    min_recall: float | None = None
    min_precision: float | None = None
    queries: list[MatrixQuery]
    per_skill: dict[str, SkillScore]
    collisions: list[Collision] = Field(default_factory=list)
    summary: MatrixSummary | None = None


class Passed(Part):
    passed: int
    total: int


class Candidate(Part):
    """One description the loop tried, scored on the train and held-out queries (none when
    it was refused unscored)."""

    iteration: int
    description: str
    train: Passed | None = None
    test: Passed | None = None
    refused: str = ""


class CandidatesDocument(Document):
    """description-candidates.json of ``agent-skills improve-description``."""

    NAME = "description-candidates"

    skill_name: str
    original: str = ""
    start: GitVersion | None = Field(
        default=None, description="with --baseline git:REF: where the original was taken from"
    )
    holdout: float | None = None
    seed: int | None = None
    model: str | None = None
    runs_per_query: int | None = None
    threshold: float | None = None
    train_queries: list[str] = Field(default_factory=list)
    test_queries: list[str] = Field(default_factory=list)
    candidates: list[Candidate]
    best: str = ""
    best_iteration: int | None = None
    tokens: int | None = None
    max_tokens: int | None = None
