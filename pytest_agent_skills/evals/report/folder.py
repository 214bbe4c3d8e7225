"""Reading an eval output folder into plain values the report renders.

The folder is the one docs/evals.md describes: ``benchmark.json`` with its run folders
(``eval-<id>/<configuration>/run-<n>/`` holding ``grading.json``, ``transcript.json`` and
``outputs/``) and/or ``triggers.json``. A file that is there must be well-formed: bad JSON or
a field of the wrong type is a :class:`ReportError` naming the file, the field and (for JSON
syntax) the line. A run folder or transcript that is absent is shown as absent, since an
interrupted run may leave none.
"""

from __future__ import annotations

import json
from pathlib import Path

from .located import Node, ReportError, describe, load_node, object_items
from .run_reader import OUTPUT_TEXT_LIMIT as OUTPUT_TEXT_LIMIT  # the report's limits, in one place
from .run_reader import Budget, read_run
from .values import (
    Benchmark,
    Candidate,
    Candidates,
    Collision,
    Disagreement,
    EvalEvidence,
    Flaky,
    Interval,
    Matrix,
    MatrixQuery,
    ModelFigures,
    ModelsOverview,
    ReportFolder,
    SkillScore,
    Stat,
    TriggerResult,
    Triggers,
    Verdicts,
)

OUTPUTS_BUDGET = 2_000_000  # characters of output files inlined in the whole page
MATRIX_FILE = "triggers-matrix.json"
CANDIDATES_FILE = "description-candidates.json"


def read_folder(out_dir: Path) -> ReportFolder:
    """Everything the report shows, read from ``out_dir``; :class:`ReportError` if it cannot be."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ReportError(out_dir, None, "is not a folder (the eval output folder, --out)")
    benchmark_file = out_dir / "benchmark.json"
    triggers_file = out_dir / "triggers.json"
    matrix_file = out_dir / MATRIX_FILE
    candidates_file = out_dir / CANDIDATES_FILE
    models_file = out_dir / MODELS_FILE
    if not any(
        path.exists()
        for path in (benchmark_file, triggers_file, matrix_file, candidates_file, models_file)
    ):
        raise ReportError(
            out_dir,
            None,
            "holds neither benchmark.json nor triggers.json: run `agent-skills eval` "
            "with --out pointing here first",
        )
    budget = Budget(OUTPUTS_BUDGET)
    benchmark = (
        _read_benchmark(out_dir, benchmark_file, budget) if benchmark_file.exists() else None
    )
    triggers = _read_triggers(triggers_file) if triggers_file.exists() else None
    matrix = _read_matrix(matrix_file) if matrix_file.exists() else None
    candidates = _read_candidates(candidates_file) if candidates_file.exists() else None
    models = _read_models(models_file) if models_file.exists() else None
    return ReportFolder(out_dir, benchmark, triggers, matrix, candidates, models)


MODELS_FILE = "models.json"


def _read_model_figures(node: Node) -> ModelFigures:
    node.obj()
    return ModelFigures(
        node.opt_number("with_skill"),
        _read_interval(node, "with_skill_ci95"),
        node.opt_text("delta"),
        _read_interval(node, "delta_ci95"),
        node.opt_text("verdict"),
        node.opt_number("tokens"),
        node.opt_number("time_seconds"),
    )


def _read_models(path: Path) -> ModelsOverview:
    root = load_node(path).obj()
    models = tuple(item.text() for item in root.child("models").items())
    folders = {name: value.text() for name, value in object_items(root.child("folders").obj())}
    for model in models:
        folder = folders.get(model, "")
        if not folder or "/" in folder or folder.startswith("."):
            raise root.child("folders").fail(f"no plain folder name for model {model!r}")
    overall = {
        name: _read_model_figures(value) for name, value in object_items(root.child("overall"))
    }
    evals = tuple(
        (
            item.obj().child("eval_id").integer(),
            item.child("eval_name").text(),
            {
                name: _read_model_figures(value)
                for name, value in object_items(item.child("models").obj())
            },
        )
        for item in root.child("evals").items()
    )
    return ModelsOverview(root.opt_text("skill_name"), models, folders, overall, evals)


def _read_benchmark(out_dir: Path, path: Path, budget: Budget) -> Benchmark:
    root = load_node(path).obj()
    metadata: dict[str, str] = {}
    if root.has("metadata"):
        for key, value in root.child("metadata").obj().value.items():
            metadata[str(key)] = value if isinstance(value, str) else json.dumps(value)
    runs = tuple(read_run(out_dir, node, budget) for node in root.child("runs").items())
    seen: dict[tuple[int, str, int], str] = {}
    for run, node in zip(runs, root.child("runs").items(), strict=True):
        key = (run.eval_id, run.configuration, run.run_number)
        if key in seen:
            raise node.fail(
                f"eval {run.eval_id} {run.configuration} run {run.run_number} is listed twice "
                f"(first at {seen[key]})"
            )
        seen[key] = node.where
    summary: dict[str, dict[str, Stat]] = {}
    delta: dict[str, str] = {}
    if root.has("run_summary"):
        for name, node in object_items(root.child("run_summary").obj()):
            if name == "delta":
                delta = {key: value.text() for key, value in object_items(node.obj())}
            else:
                summary[name] = {
                    key: _read_stat(value)
                    for key, value in object_items(node.obj())
                    if isinstance(value.value, dict)
                }
    notes = tuple(node.text() for node in root.child("notes").items()) if root.has("notes") else ()
    return Benchmark(metadata, runs, summary, delta, notes, _read_verdicts(root))


def _read_interval(node: Node, key: str) -> Interval | None:
    if not node.has(key):
        return None
    pair = node.child(key)
    values = pair._expect(list, "a list [low, high]")
    if len(values) != 2:
        raise pair.fail(f"expected a list [low, high], found {describe(values)}")
    return pair.child(0).number(), pair.child(1).number()


def _read_eval_evidence(node: Node) -> EvalEvidence:
    rates = node.child("pass_rate").obj() if node.has("pass_rate") else None
    ci95 = {
        name: _read_interval(part.obj(), "ci95")
        for name, part in (object_items(rates) if rates else ())
    }
    flaky = tuple(
        Flaky(
            item.obj().child("text").text(),
            item.child("configuration").text(),
            item.child("passed").integer(),
            item.child("runs").integer(),
        )
        for item in (node.child("flaky").items() if node.has("flaky") else ())
    )
    return EvalEvidence(
        ci95,
        _read_interval(node, "delta_ci95"),
        node.opt_text("verdict"),
        node.opt_text("verdict_note"),
        node.child("runs_for_0_10").integer() if node.has("runs_for_0_10") else None,
        flaky,
        _read_interval(node, "noise_floor_ci95"),
        tuple(
            Disagreement(
                item.obj().child("text").text(),
                item.child("configuration").text(),
                item.child("run_number").integer(),
                item.child("passed").integer(),
                item.child("gradings").integer(),
            )
            for item in (
                node.child("grader_disagreements").items()
                if node.has("grader_disagreements")
                else ()
            )
        ),
    )


def _read_verdicts(root: Node) -> Verdicts:
    """The evidence fields of benchmark.json, where they are."""
    evals = {
        item.obj().child("eval_id").integer(): _read_eval_evidence(item)
        for item in (root.child("evals").items() if root.has("evals") else ())
    }
    all_met: dict[str, Interval | None] = {}
    if root.has("run_summary"):
        for name, node in object_items(root.child("run_summary").obj()):
            if name != "delta":
                all_met[name] = _read_interval(node.obj(), "all_met_ci95")
    overall = root.child("overall").obj() if root.has("overall") else None
    calibration = root.child("calibration").obj() if root.has("calibration") else None
    return Verdicts(
        evals,
        all_met,
        _read_interval(overall, "delta_ci95") if overall else None,
        overall.opt_text("verdict") if overall else "",
        overall.opt_text("method") if overall else "",
        _read_interval(calibration, "delta_ci95") if calibration else None,
        calibration.child("flip_share").number()
        if calibration and calibration.has("flip_share")
        else None,
    )


def _read_stat(node: Node) -> Stat:
    node.obj()
    return Stat(
        node.opt_number("mean"),
        node.opt_number("stddev"),
        node.opt_number("min"),
        node.opt_number("max"),
        _read_interval(node, "ci95"),
    )


def _read_triggers(path: Path) -> Triggers:
    root = load_node(path).obj()
    results = []
    for node in root.child("results").items():
        node.obj()
        results.append(
            TriggerResult(
                query=node.child("query").text(),
                should_trigger=node.child("should_trigger").flag(),
                trigger_rate=node.child("trigger_rate").number(),
                triggers=node.opt_int("triggers"),
                runs=node.opt_int("runs"),
                passed=node.child("pass").flag(),
                errors=node.opt_int("errors"),
                error_messages=tuple(item.text() for item in node.child("error_messages").items())
                if node.has("error_messages")
                else (),
            )
        )
    summary = root.child("summary").obj() if root.has("summary") else None
    passed = sum(result.passed for result in results)
    return Triggers(
        skill_name=root.opt_text("skill_name"),
        description=root.opt_text("description"),
        model=root.opt_text("model"),
        threshold=root.child("threshold").number() if root.has("threshold") else None,
        results=tuple(results),
        total=summary.opt_int("total", len(results)) if summary else len(results),
        passed=summary.opt_int("passed", passed) if summary else passed,
        failed=summary.opt_int("failed", len(results) - passed)
        if summary
        else len(results) - passed,
        runtime=root.opt_text("runtime"),
    )


def _opt_rate(node: Node, key: str) -> float | None:
    return node.child(key).number() if node.has(key) else None


def _counts(node: Node) -> dict[str, int]:
    return {str(key): node.child(str(key)).integer() for key in node.obj().value}


def _read_matrix(path: Path) -> Matrix:
    root = load_node(path).obj()
    queries = tuple(
        MatrixQuery(
            query=node.obj().child("query").text(),
            owner=node.child("owner").text(),
            should_trigger=node.child("should_trigger").flag(),
            runs=node.opt_int("runs"),
            loaded=_counts(node.child("loaded")),
            errors=node.opt_int("errors"),
        )
        for node in root.child("queries").items()
    )
    per_skill = root.child("per_skill").obj()
    scores = tuple(
        _skill_score(str(name), per_skill.child(str(name)).obj()) for name in per_skill.value
    )
    collisions = tuple(
        Collision(
            a=node.obj().child("a").text(),
            b=node.child("b").text(),
            count=node.child("count").integer(),
            a_took_b=node.opt_int("a_took_b"),
            b_took_a=node.opt_int("b_took_a"),
        )
        for node in (root.child("collisions").items() if root.has("collisions") else ())
    )
    summary = root.child("summary").obj() if root.has("summary") else None
    below = summary.child("below_bar").obj().value if summary and summary.has("below_bar") else {}
    return Matrix(
        skills=tuple(node.text() for node in root.child("skills").items()),
        model=root.opt_text("model"),
        runs_per_query=root.opt_int("runs_per_query"),
        queries=queries,
        scores=scores,
        collisions=collisions,
        min_recall=_opt_rate(root, "min_recall"),
        min_precision=_opt_rate(root, "min_precision"),
        below_bar=tuple(str(name) for name in below),
        errors=summary.opt_int("errors") if summary else 0,
        runs_skipped=summary.opt_int("runs_skipped") if summary else 0,
        time_seconds=_opt_rate(summary, "time_seconds") if summary else None,
    )


def _skill_score(name: str, node: Node) -> SkillScore:
    went = _counts(node.child("false_triggers")) if node.has("false_triggers") else {}
    # A file written before own_false_triggers listed them as false triggers "to" the skill.
    own = node.opt_int("own_false_triggers") + went.pop(name, 0)
    return SkillScore(
        name=name,
        precision=_opt_rate(node, "precision"),
        recall=_opt_rate(node, "recall"),
        false_triggers=went,
        own_false_triggers=own,
    )


def _passed_of(node: Node, key: str) -> tuple[int, int] | None:
    if not node.has(key):
        return None
    part = node.child(key).obj()
    return part.child("passed").integer(), part.child("total").integer()


def _read_candidates(path: Path) -> Candidates:
    root = load_node(path).obj()
    candidates = tuple(
        Candidate(
            iteration=node.obj().child("iteration").integer(),
            description=node.child("description").text(),
            train=_passed_of(node, "train"),
            test=_passed_of(node, "test"),
            refused=node.opt_text("refused"),
        )
        for node in root.child("candidates").items()
    )
    return Candidates(
        skill_name=root.child("skill_name").text(),
        original=root.opt_text("original"),
        holdout=_opt_rate(root, "holdout"),
        seed=root.child("seed").integer() if root.has("seed") else None,
        candidates=candidates,
        best=root.opt_text("best"),
    )
