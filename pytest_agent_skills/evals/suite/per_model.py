"""The same evals on several models: one skill-creator-compatible output folder per model
(``DIR/<model>/``, its cassettes under ``<cassettes>/<skill>/<model>/``) and one overview,
``DIR/models.json``: per eval and model the with-skill pass rate, the delta with its interval
and verdict, tokens and time. It answers "on which models does this skill help?"."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ..documents.benchmark_model import (
    BenchmarkDocument,
    ConfigurationSummary,
    Delta,
    EvalVerdict,
    Overall,
    Stat,
)
from ..documents.overview import EvalAcrossModels, ModelFigures, ModelsDocument
from ..verdicts.benchmark import WITH_SKILL, stats
from .suite_runner import BenchmarkOutcome, EvalRequest, EvalSetupError, run_benchmark

MODELS_NAME = "models.json"


def model_folder(model: str) -> str:
    """The folder name of a model: its name with every character but letters, digits, dot,
    dash and underscore as ``_`` (``org/model:7b`` -> ``org_model_7b``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", model).strip(".") or "_"


def request_for(request: EvalRequest, model: str) -> EvalRequest:
    """``request`` with ``model`` as the agent (and the grader, unless one is set), its
    cassettes in the model's own folder."""
    options = request.options
    run = dataclasses.replace(options.settings, model_name=model)
    return dataclasses.replace(
        request,
        options=dataclasses.replace(options, run=run, model_folder=model_folder(model)),
    )


def _figures(document: BenchmarkDocument, eval_id: int | None) -> ModelFigures:
    """The overview's figures of one eval (None: every eval) in one model's benchmark."""
    runs = [
        run.result
        for run in document.runs
        if run.configuration == WITH_SKILL and eval_id in (None, run.eval_id)
    ]
    found: Overall | EvalVerdict | None
    if eval_id is None:
        summary, delta = document.run_summary[WITH_SKILL], document.run_summary["delta"]
        rates = summary.pass_rate if isinstance(summary, ConfigurationSummary) else None
        shown = delta.pass_rate if isinstance(delta, Delta) else None
        found = document.overall
    else:
        found = next(item for item in document.evals if item.eval_id == eval_id)
        rates, shown = found.pass_rate.get(WITH_SKILL), found.delta
    rates = rates or Stat()
    return ModelFigures(
        with_skill=rates.mean,
        with_skill_ci95=rates.ci95,
        delta=shown or "",
        delta_ci95=found.delta_ci95 if found else None,
        verdict=found.verdict if found else "",
        tokens=stats([float(result.tokens) for result in runs], 1).mean,
        time_seconds=stats([result.time_seconds for result in runs], 3).mean,
    )


def models_overview(skill_name: str, documents: dict[str, BenchmarkDocument]) -> ModelsDocument:
    """models.json of each model's benchmark (in the order the models were given)."""
    first = next(iter(documents.values()))
    return ModelsDocument(
        skill_name=skill_name,
        models=list(documents),
        folders={model: model_folder(model) for model in documents},
        configurations=first.metadata.configurations or [],
        overall={model: _figures(document, None) for model, document in documents.items()},
        evals=[
            EvalAcrossModels(
                eval_id=verdict.eval_id,
                eval_name=verdict.eval_name or "",
                models={
                    model: _figures(document, verdict.eval_id)
                    for model, document in documents.items()
                },
            )
            for verdict in first.evals
        ],
    )


def run_models(
    request: EvalRequest,
    models: Sequence[str],
    write: Callable[[Path, BenchmarkOutcome], BenchmarkDocument],
    out_dir: Path,
) -> tuple[ModelsDocument, bool]:
    """Every model's benchmark, written by ``write`` into ``out_dir/<model>/`` (which gives
    the document written), and the overview; a model interrupted stops the ones after it
    (the second value says whether one was)."""
    folders: dict[str, str] = {}
    for model in models:
        other = folders.setdefault(model_folder(model), model)
        if other != model:
            raise EvalSetupError(
                f"--model {other!r} and --model {model!r} would share the output folder"
                f" {model_folder(model)!r}; give models whose names differ in letters or digits"
            )
    documents: dict[str, BenchmarkDocument] = {}
    interrupted = False
    for model in dict.fromkeys(models):
        outcome = run_benchmark(request_for(request, model))
        documents[model] = write(Path(out_dir) / model_folder(model), outcome)
        interrupted = outcome.interrupted
        if interrupted:
            break
    skill_name = next(iter(documents.values())).metadata.skill_name or ""
    return models_overview(skill_name, documents).stamped(), interrupted
