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
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import LocatedError

# What one page inlines: enough to read a run, never a page that a browser chokes on.
OUTPUT_TEXT_LIMIT = 20_000  # characters of one output file shown
OUTPUT_FILES_LIMIT = 200  # output files listed per run
OUTPUTS_BUDGET = 2_000_000  # characters of output files inlined in the whole page
_SNIFF_BYTES = 4 * OUTPUT_TEXT_LIMIT + 4

ERROR_KINDS = ("model", "grading", "harness", "interrupted")
MATRIX_FILE = "triggers-matrix.json"
CANDIDATES_FILE = "description-candidates.json"
_CONFIGURATION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class ReportError(LocatedError):
    """The eval output folder cannot be read: ``path[:line]: what is wrong``."""


@dataclass(frozen=True)
class RunError:
    kind: str
    message: str


@dataclass(frozen=True)
class Expectation:
    text: str
    passed: bool
    evidence: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # as the model sent them (JSON text, pretty-printed when it parses)
    result: str | None  # the tool message's content; None when no result was recorded


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Transcript:
    prompt: str
    messages: tuple[Message, ...]
    final_text: str
    error: RunError | None
    total_tokens: int | None


@dataclass(frozen=True)
class OutputFile:
    path: str  # relative to the run's outputs/, with "/"
    size: int
    kind: str  # "text", "binary", "symlink", "over-budget"
    text: str = ""  # shown content (text files), at most OUTPUT_TEXT_LIMIT characters
    truncated: bool = False


@dataclass(frozen=True)
class Run:
    eval_id: int
    eval_name: str
    configuration: str
    run_number: int
    pass_rate: float
    passed: int
    total: int
    time_seconds: float
    tokens: int
    tool_calls: int
    errors: int
    error: RunError | None
    expectations: tuple[Expectation, ...]
    notes: tuple[str, ...]
    run_dir: str
    found: bool  # the run folder exists
    transcript: Transcript | None
    outputs: tuple[OutputFile, ...]
    outputs_omitted: int  # files past OUTPUT_FILES_LIMIT
    #: Never started (the eval's token budget was spent): neither a pass nor an error.
    skipped: bool = False
    #: Why the run stopped before its end (turn_limit, run_tokens, budget), or "".
    stop_reason: str = ""

    @property
    def is_error(self) -> bool:
        return self.error is not None or self.errors > 0

    @property
    def outcome(self) -> str:
        """``skipped`` (never started), ``error`` (never a pass, whatever was graded),
        ``pass`` (every expectation met) or ``fail``."""
        if self.skipped:
            return "skipped"
        if self.is_error:
            return "error"
        return "pass" if self.total and self.passed == self.total else "fail"

    @property
    def counted_pass_rate(self) -> float:
        """The pass rate the summaries use: an errored run is never a pass."""
        return 0.0 if self.is_error else self.pass_rate


Interval = tuple[float, float]


@dataclass(frozen=True)
class Stat:
    mean: float
    stddev: float
    min: float
    max: float
    ci95: Interval | None = None  # the 95% interval of the mean, when recorded


@dataclass(frozen=True)
class Flaky:
    """An expectation that passed in some runs of a configuration and failed in others."""

    text: str
    configuration: str
    passed: int
    runs: int


@dataclass(frozen=True)
class Disagreement:
    """An expectation the gradings of one run split on (``--grader-runs``)."""

    text: str
    configuration: str
    run_number: int
    passed: int
    gradings: int


@dataclass(frozen=True)
class EvalEvidence:
    """benchmark.json's evidence fields of one eval (``evals[i]``)."""

    ci95: dict[str, Interval | None]  # configuration -> interval of its mean pass rate
    delta_ci95: Interval | None
    verdict: str
    verdict_note: str
    runs_for_0_10: int | None
    flaky: tuple[Flaky, ...]
    noise_floor: Interval | None = None  # this eval's A/A delta interval, when calibrated
    disagreements: tuple[Disagreement, ...] = ()


@dataclass(frozen=True)
class Verdicts:
    """The verdicts recorded in benchmark.json (absent from older files: all empty)."""

    evals: dict[int, EvalEvidence]
    all_met: dict[str, Interval | None]  # configuration -> Wilson interval of all met
    overall_delta: Interval | None = None
    overall_verdict: str = ""
    method: str = ""
    #: The A/A noise floor: the delta interval of with_skill against its repeat, and the
    #: share of expectation verdicts that flipped between them.
    floor: Interval | None = None
    flip_share: float | None = None


@dataclass(frozen=True)
class ModelFigures:
    """One model's figures of one eval (or of every eval) in models.json."""

    with_skill: float
    with_skill_ci95: Interval | None
    delta: str
    delta_ci95: Interval | None
    verdict: str
    tokens: float
    time_seconds: float


@dataclass(frozen=True)
class ModelsOverview:
    """models.json: the same evals on several models."""

    skill_name: str
    models: tuple[str, ...]
    folders: dict[str, str]  # model -> its output folder below this one
    overall: dict[str, ModelFigures]
    evals: tuple[tuple[int, str, dict[str, ModelFigures]], ...]  # id, name, model -> figures


@dataclass(frozen=True)
class Benchmark:
    metadata: dict[str, str]  # shown as is, in file order
    runs: tuple[Run, ...]
    summary: dict[str, dict[str, Stat]]  # configuration -> metric -> figures, file order
    delta: dict[str, str]
    notes: tuple[str, ...]
    verdicts: Verdicts = Verdicts({}, {})


@dataclass(frozen=True)
class TriggerResult:
    query: str
    should_trigger: bool
    trigger_rate: float
    triggers: int
    runs: int
    passed: bool
    errors: int = 0  # runs that errored (never counted as a trigger)
    error_messages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Triggers:
    skill_name: str
    description: str
    model: str
    threshold: float | None
    results: tuple[TriggerResult, ...]
    total: int
    passed: int
    failed: int
    #: Where the model's commands ran ("" in a folder written before it was recorded).
    runtime: str = ""


@dataclass(frozen=True)
class MatrixQuery:
    query: str
    owner: str
    should_trigger: bool
    runs: int
    loaded: dict[str, int]  # skill (or "none") -> runs that loaded it first
    errors: int


@dataclass(frozen=True)
class SkillScore:
    name: str
    precision: float | None  # None: nothing to measure it on
    recall: float | None
    false_triggers: dict[str, int]  # another skill -> runs of this skill's queries it took
    own_false_triggers: int = 0  # runs of this skill's should-not queries that loaded it


@dataclass(frozen=True)
class Collision:
    a: str
    b: str
    count: int
    a_took_b: int
    b_took_a: int


@dataclass(frozen=True)
class Matrix:
    """triggers-matrix.json: which skill each query loaded, with every skill offered."""

    skills: tuple[str, ...]
    model: str
    runs_per_query: int
    queries: tuple[MatrixQuery, ...]
    scores: tuple[SkillScore, ...]
    collisions: tuple[Collision, ...]
    min_recall: float | None
    min_precision: float | None
    below_bar: tuple[str, ...]
    errors: int = 0
    #: Runs never started: the token budget was spent (judged nowhere, not errors).
    runs_skipped: int = 0
    #: The wall time the matrix took (None in a file written before it was recorded).
    time_seconds: float | None = None


@dataclass(frozen=True)
class Candidate:
    iteration: int
    description: str
    train: tuple[int, int] | None  # (passed, total); None for a candidate refused unscored
    test: tuple[int, int] | None
    refused: str


@dataclass(frozen=True)
class Candidates:
    """description-candidates.json: the descriptions the improvement loop tried."""

    skill_name: str
    original: str
    holdout: float | None
    seed: int | None
    candidates: tuple[Candidate, ...]
    best: str


@dataclass(frozen=True)
class ReportFolder:
    path: Path
    benchmark: Benchmark | None
    triggers: Triggers | None
    matrix: Matrix | None = None
    candidates: Candidates | None = None
    models: ModelsOverview | None = None


@dataclass
class _Budget:
    """Characters of output files the page may still inline."""

    left: int


@dataclass(frozen=True)
class _Node:
    """A JSON value with where it came from, so a wrong field names its file and path."""

    value: Any
    file: Path
    where: str

    def fail(self, message: str) -> ReportError:
        return ReportError(self.file, None, f"{self.where or 'the top level'}: {message}")

    def _expect(self, types: type | tuple[type, ...], what: str) -> Any:
        value = self.value
        if isinstance(value, bool) and bool not in (
            types if isinstance(types, tuple) else (types,)
        ):
            raise self.fail(f"expected {what}, found {_describe(value)}")
        if not isinstance(value, types):
            raise self.fail(f"expected {what}, found {_describe(value)}")
        return value

    def child(self, key: str | int) -> _Node:
        if isinstance(key, int):
            return _Node(self._expect(list, "a list")[key], self.file, f"{self.where}[{key}]")
        where = f"{self.where}.{key}" if self.where else key
        return _Node(self._expect(dict, "an object").get(key), self.file, where)

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and self.value.get(key) is not None

    def obj(self) -> _Node:
        self._expect(dict, "an object")
        return self

    def items(self) -> Iterator[_Node]:
        values = self._expect(list, "a list")
        for index in range(len(values)):
            yield self.child(index)

    def text(self) -> str:
        return str(self._expect(str, "a string"))

    def integer(self) -> int:
        return int(self._expect(int, "an integer"))

    def number(self) -> float:
        return float(self._expect((int, float), "a number"))

    def flag(self) -> bool:
        return bool(self._expect(bool, "true or false"))

    def opt_text(self, key: str, default: str = "") -> str:
        return self.child(key).text() if self.has(key) else default

    def opt_int(self, key: str, default: int = 0) -> int:
        return self.child(key).integer() if self.has(key) else default

    def opt_number(self, key: str, default: float = 0.0) -> float:
        return self.child(key).number() if self.has(key) else default


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null or absent)"
    return f"{type(value).__name__} {json.dumps(value)[:60]}"


def _load_json(path: Path) -> _Node:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ReportError(path, None, f"cannot be read: {error.strerror or error}") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ReportError(path, line, "is not UTF-8 text") from error
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ReportError(
            path, error.lineno, f"is not valid JSON: {error.msg} (column {error.colno})"
        ) from error
    return _Node(value, path, "")


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
    budget = _Budget(OUTPUTS_BUDGET)
    benchmark = (
        _read_benchmark(out_dir, benchmark_file, budget) if benchmark_file.exists() else None
    )
    triggers = _read_triggers(triggers_file) if triggers_file.exists() else None
    matrix = _read_matrix(matrix_file) if matrix_file.exists() else None
    candidates = _read_candidates(candidates_file) if candidates_file.exists() else None
    models = _read_models(models_file) if models_file.exists() else None
    return ReportFolder(out_dir, benchmark, triggers, matrix, candidates, models)


MODELS_FILE = "models.json"


def _read_model_figures(node: _Node) -> ModelFigures:
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
    root = _load_json(path).obj()
    models = tuple(item.text() for item in root.child("models").items())
    folders = {name: value.text() for name, value in _object_items(root.child("folders").obj())}
    for model in models:
        folder = folders.get(model, "")
        if not folder or "/" in folder or folder.startswith("."):
            raise root.child("folders").fail(f"no plain folder name for model {model!r}")
    overall = {
        name: _read_model_figures(value) for name, value in _object_items(root.child("overall"))
    }
    evals = tuple(
        (
            item.obj().child("eval_id").integer(),
            item.child("eval_name").text(),
            {
                name: _read_model_figures(value)
                for name, value in _object_items(item.child("models").obj())
            },
        )
        for item in root.child("evals").items()
    )
    return ModelsOverview(root.opt_text("skill_name"), models, folders, overall, evals)


def _read_benchmark(out_dir: Path, path: Path, budget: _Budget) -> Benchmark:
    root = _load_json(path).obj()
    metadata: dict[str, str] = {}
    if root.has("metadata"):
        for key, value in root.child("metadata").obj().value.items():
            metadata[str(key)] = value if isinstance(value, str) else json.dumps(value)
    runs = tuple(_read_run(out_dir, node, budget) for node in root.child("runs").items())
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
        for name, node in _object_items(root.child("run_summary").obj()):
            if name == "delta":
                delta = {key: value.text() for key, value in _object_items(node.obj())}
            else:
                summary[name] = {
                    key: _read_stat(value)
                    for key, value in _object_items(node.obj())
                    if isinstance(value.value, dict)
                }
    notes = tuple(node.text() for node in root.child("notes").items()) if root.has("notes") else ()
    return Benchmark(metadata, runs, summary, delta, notes, _read_verdicts(root))


def _read_interval(node: _Node, key: str) -> Interval | None:
    if not node.has(key):
        return None
    pair = node.child(key)
    values = pair._expect(list, "a list [low, high]")
    if len(values) != 2:
        raise pair.fail(f"expected a list [low, high], found {_describe(values)}")
    return pair.child(0).number(), pair.child(1).number()


def _read_eval_evidence(node: _Node) -> EvalEvidence:
    rates = node.child("pass_rate").obj() if node.has("pass_rate") else None
    ci95 = {
        name: _read_interval(part.obj(), "ci95")
        for name, part in (_object_items(rates) if rates else ())
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


def _read_verdicts(root: _Node) -> Verdicts:
    """The evidence fields of benchmark.json, where they are."""
    evals = {
        item.obj().child("eval_id").integer(): _read_eval_evidence(item)
        for item in (root.child("evals").items() if root.has("evals") else ())
    }
    all_met: dict[str, Interval | None] = {}
    if root.has("run_summary"):
        for name, node in _object_items(root.child("run_summary").obj()):
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


def _object_items(node: _Node) -> Iterator[tuple[str, _Node]]:
    for key in node.value:
        yield str(key), node.child(str(key))


def _read_stat(node: _Node) -> Stat:
    node.obj()
    return Stat(
        node.opt_number("mean"),
        node.opt_number("stddev"),
        node.opt_number("min"),
        node.opt_number("max"),
        _read_interval(node, "ci95"),
    )


def _read_error(node: _Node) -> RunError:
    node.obj()
    kind = node.child("kind").text()
    if kind not in ERROR_KINDS:
        raise node.child("kind").fail(
            f"unknown error kind {kind!r}; one of {', '.join(ERROR_KINDS)}"
        )
    return RunError(kind, node.opt_text("message"))


def _read_expectations(node: _Node) -> tuple[Expectation, ...]:
    expectations = []
    for item in node.items():
        item.obj()
        expectations.append(
            Expectation(
                item.child("text").text(), item.child("passed").flag(), item.opt_text("evidence")
            )
        )
    return tuple(expectations)


def _read_run(out_dir: Path, node: _Node, budget: _Budget) -> Run:
    node.obj()
    eval_id = node.child("eval_id").integer()
    configuration = node.child("configuration").text()
    if not _CONFIGURATION_NAME.fullmatch(configuration):
        raise node.child("configuration").fail(
            f"{configuration!r} is not a configuration name (with_skill, without_skill, baseline)"
        )
    run_number = node.child("run_number").integer()
    result = node.child("result").obj()
    total = result.opt_int("total")
    run_dir = node.opt_text("run_dir", f"eval-{eval_id}/{configuration}/run-{run_number}")
    folder = _inside(out_dir, run_dir, node.child("run_dir"))
    expectations: tuple[Expectation, ...] = ()
    if node.has("expectations"):
        expectations = _read_expectations(node.child("expectations"))
    elif (folder / "grading.json").is_file():  # benchmark.json without them: the run's own
        grading = _load_json(folder / "grading.json").obj()
        if grading.has("expectations"):
            expectations = _read_expectations(grading.child("expectations"))
    transcript_file = folder / "transcript.json"
    transcript = (
        _read_transcript(_load_json(transcript_file)) if transcript_file.is_file() else None
    )
    error = _read_error(node.child("error")) if node.has("error") else None
    if error is None and transcript is not None:
        error = transcript.error
    outputs, omitted = _read_outputs(folder / "outputs", budget)
    return Run(
        eval_id=eval_id,
        eval_name=node.opt_text("eval_name", f"eval {eval_id}"),
        configuration=configuration,
        run_number=run_number,
        pass_rate=result.child("pass_rate").number(),
        passed=result.opt_int("passed"),
        total=total,
        time_seconds=result.opt_number("time_seconds"),
        tokens=result.opt_int("tokens"),
        tool_calls=result.opt_int("tool_calls"),
        errors=result.opt_int("errors"),
        error=error,
        expectations=expectations,
        notes=tuple(item.text() for item in node.child("notes").items())
        if node.has("notes")
        else (),
        run_dir=run_dir,
        found=folder.is_dir(),
        transcript=transcript,
        outputs=outputs,
        outputs_omitted=omitted,
        skipped=node.has("skipped") and node.child("skipped").flag(),
        stop_reason=result.opt_text("stop_reason"),
    )


def _inside(out_dir: Path, relative: str, node: _Node) -> Path:
    """``out_dir / relative``, refusing a path that leaves the output folder."""
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise node.fail(f"{relative!r} is not a folder inside the output folder")
    return out_dir / candidate


def _content_text(node: _Node) -> str:
    """A message's content: a string, null, or OpenAI's list of parts (text parts joined)."""
    if node.value is None:
        return ""
    if isinstance(node.value, str):
        return node.value
    parts = []
    for part in node.items():
        part.obj()
        kind = part.opt_text("type", "text")
        parts.append(part.opt_text("text") if kind == "text" else f"[{kind} part]")
    return "\n".join(parts)


def _arguments_text(node: _Node) -> str:
    value = node.value
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return str(node.value)  # shown as the model sent it
    return json.dumps(value, indent=2, ensure_ascii=False)


def _result_text(text: str) -> str:
    """A tool's result, pretty-printed when it is a JSON object or list (as skill tools answer)."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def _read_transcript(root: _Node) -> Transcript:
    root.obj()
    results: dict[str, str] = {}
    raw_messages = list(root.child("messages").items()) if root.has("messages") else []
    for message in raw_messages:
        message.obj()
        if message.opt_text("role") == "tool" and message.has("tool_call_id"):
            call_id = message.child("tool_call_id").text()
            results[call_id] = _result_text(_content_text(message.child("content")))
    messages = []
    for message in raw_messages:
        role = message.child("role").text()
        if role == "tool":
            continue  # shown with the call it answers
        calls = []
        if message.has("tool_calls"):
            for call in message.child("tool_calls").items():
                function = call.obj().child("function").obj()
                call_id = call.opt_text("id")
                calls.append(
                    ToolCall(
                        function.child("name").text(),
                        _arguments_text(function.child("arguments")),
                        results.get(call_id),
                    )
                )
        messages.append(Message(role, _content_text(message.child("content")), tuple(calls)))
    if not raw_messages and root.has("tool_calls"):
        # No messages recorded: the paired calls alone still tell what the agent did.
        calls = [
            ToolCall(
                call.obj().child("name").text(),
                _arguments_text(call.child("arguments")),
                _result_text(_content_text(call.child("result"))) if call.has("result") else None,
            )
            for call in root.child("tool_calls").items()
        ]
        messages.append(Message("assistant", "", tuple(calls)))
    usage = root.child("usage") if root.has("usage") else None
    return Transcript(
        prompt=root.opt_text("prompt"),
        messages=tuple(messages),
        final_text=root.opt_text("final_text"),
        error=_read_error(root.child("error")) if root.has("error") else None,
        total_tokens=usage.obj().opt_int("total_tokens") if usage is not None else None,
    )


def _read_outputs(folder: Path, budget: _Budget) -> tuple[tuple[OutputFile, ...], int]:
    """The run's output files, sorted; symlinks are listed, never followed."""
    if not folder.is_dir() or folder.is_symlink():
        return (), 0
    found: list[tuple[str, Path]] = []
    for parent, dirs, files in os.walk(folder):  # does not descend into linked folders
        dirs.sort()
        base = Path(parent)
        for name in sorted(files) + [d for d in dirs if (base / d).is_symlink()]:
            found.append(((base / name).relative_to(folder).as_posix(), base / name))
    found.sort()
    shown = [_read_output(relative, path, budget) for relative, path in found[:OUTPUT_FILES_LIMIT]]
    return tuple(shown), max(0, len(found) - OUTPUT_FILES_LIMIT)


def _read_output(relative: str, path: Path, budget: _Budget) -> OutputFile:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return OutputFile(relative, 0, "symlink", os.readlink(path))
    if not stat.S_ISREG(info.st_mode):
        return OutputFile(relative, info.st_size, "binary")
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    text = _as_text(head, complete=len(head) == info.st_size)
    if text is None:
        return OutputFile(relative, info.st_size, "binary")
    if budget.left <= 0:
        return OutputFile(relative, info.st_size, "over-budget")
    shown = text[: min(OUTPUT_TEXT_LIMIT, budget.left)]
    budget.left -= len(shown)
    truncated = len(shown) < len(text) or len(head) < info.st_size
    return OutputFile(relative, info.st_size, "text", shown, truncated)


def _as_text(head: bytes, complete: bool) -> str | None:
    """``head`` as text, or None for a binary file (NUL bytes, or not UTF-8)."""
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as error:
        # A cut through a multi-byte character at the sniffing limit is still text.
        if not complete and error.start >= len(head) - 3:
            return head[: error.start].decode("utf-8")
        return None


def _read_triggers(path: Path) -> Triggers:
    root = _load_json(path).obj()
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


def _opt_rate(node: _Node, key: str) -> float | None:
    return node.child(key).number() if node.has(key) else None


def _counts(node: _Node) -> dict[str, int]:
    return {str(key): node.child(str(key)).integer() for key in node.obj().value}


def _read_matrix(path: Path) -> Matrix:
    root = _load_json(path).obj()
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


def _skill_score(name: str, node: _Node) -> SkillScore:
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


def _passed_of(node: _Node, key: str) -> tuple[int, int] | None:
    if not node.has(key):
        return None
    part = node.child(key).obj()
    return part.child("passed").integer(), part.child("total").integer()


def _read_candidates(path: Path) -> Candidates:
    root = _load_json(path).obj()
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
