"""The trigger matrix and the description loop against a real OpenAI-compatible server
(llama.cpp serving SmolLM2-135M; bench/support/realmodel.py), recorded, then replayed offline
to the same documents. What is asserted is the pipeline (every run judged, the exchanges
recorded, no held-out query sent), never what a 135M model chooses.

The runs send ``tool_choice: "none"``: offered the tools, the small model's turns through this
server's function-calling handler ran past ``max_tokens`` (one request generated 6,570 tokens,
seven minutes on two cores), so every run here answers in text and routes to ``none``; the tool
round trip against the same server is covered by the budget test of the eval command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.support.realmodel import MODEL_PARAMS, RealModel
from bench.support.routing import timeless, write_repository
from pytest_agent_skills.evals.triggers.improve import ImproveRequest, improve_description
from pytest_agent_skills.evals.triggers.matrix import MatrixBars, MatrixRequest, run_matrix
from pytest_agent_skills.harness import RunSettings, Upstream
from tests.support.evals import replaying, written
from tests.support.harness import only_loopback
from tests.support.realmodel import real_model  # noqa: F401

pytestmark = pytest.mark.realmodel

SKILLS = {
    "csv-stats": (
        "Computes statistics of CSV files: mean, median, spread. Use for CSV numbers.",
        [
            ("What is the mean of the price column in sales.csv?", True),
            ("Give me the median of this CSV column.", True),
            ("Write a short poem about autumn.", False),
        ],
    ),
    "meeting-notes": (
        "Writes meeting notes from a transcript: decisions and action items.",
        [("Turn this meeting transcript into notes.", True)],
    ),
}


def _options(base_dir: Path, model: str, url: str | None = None) -> Any:
    """One run a query, one at a time; recording from ``url``, else replaying."""
    run = RunSettings(
        record_mode="all" if url else "none",
        upstream=Upstream(url, "sk-local") if url else None,
        model_name=model,
        model_params={**MODEL_PARAMS, "tool_choice": "none"},
    )
    return replace(replaying(base_dir, runs=1, jobs=1), run=run)


def test_a_recorded_matrix_and_loop_replay_offline(
    real_model: RealModel,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    skills = write_repository(tmp_path, SKILLS)
    online = _options(tmp_path, real_model.model, real_model.base_url)
    recorded = run_matrix(MatrixRequest((skills,), online, MatrixBars()))
    document = written(recorded.document)
    assert document["summary"]["errors"] == 0, document["queries"]
    for query in document["queries"]:
        assert sum(query["loaded"].values()) == query["runs"] == 1
        assert set(query["loaded"]) <= {"csv-stats", "meeting-notes", "none"}
    improved = improve_description(ImproveRequest(skills / "csv-stats", online, iterations=1))
    candidates = written(improved.document)["candidates"]
    assert candidates[0]["iteration"] == 0 and len(candidates) <= 2
    rounds = sorted((tmp_path / "eval-cassettes" / "csv-stats" / "improve").glob("round-*.json"))
    for path in rounds:  # the model's answer may be anything; the request never held out
        sent = json.dumps(json.loads(path.read_text())["interactions"][0]["request"]["body"])
        assert not any(query in sent for query in improved.document.test_queries)

    offline = _options(tmp_path, real_model.model)
    with only_loopback(monkeypatch) as off_loopback:
        again = run_matrix(MatrixRequest((skills,), offline, MatrixBars()))
        improved_again = improve_description(
            ImproveRequest(skills / "csv-stats", offline, iterations=1)
        )
    assert off_loopback == []
    assert timeless(again.document) == timeless(recorded.document)
    assert improved_again.document == improved.document
