"""``agent-skills eval SKILL_DIR``: run a skill's evals (or its trigger queries), write the
output folder, exit 0 when every eval meets its bar, 1 when one falls short, 2 on usage
errors, 130 when stopped by Ctrl-C (what finished is written)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ...config.file_settings import FileSettings
    from ..client.eval_client import BenchmarkSpec, EvalClient
    from ..documents.benchmark_model import BenchmarkDocument
    from ..setup.eval_options import EvalOptions

EXIT_OK, EXIT_SHORT, EXIT_INTERRUPTED = 0, 1, 130
D = TypeVar("D")


def add_dry_run(parser: argparse.ArgumentParser, help: str) -> None:
    """The ``--dry-run`` flag of the commands that run models (what it prints: ``help``)."""
    parser.add_argument("--dry-run", action="store_true", help=help)


def configure(parser: argparse.ArgumentParser) -> None:
    from ...config.file_settings import add_command_flags

    parser.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill folder")
    parser.add_argument("--out", type=Path, default=Path("evals-out"), help="output folder")
    parser.add_argument(
        "--triggers",
        action="store_true",
        help="measure the trigger rate of evals/triggers.json instead of running evals.json",
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR|git:REF",
        help="compare against this earlier version of the skill instead of without it: a"
        " folder, or git:REF for the skill as it was at a git ref (git:HEAD~1, git:origin/main;"
        " taken with git archive, the working tree untouched)",
    )
    parser.add_argument(
        "--eval", type=int, action="append", dest="only", metavar="ID", help="only this eval"
    )
    # The flags of the settings eval takes (--runs, --model, ...); one --model is the agent's
    # model (skills_model), several run the evals on each (skills_eval_models).
    add_command_flags(parser, "eval")
    parser.add_argument(
        "--regrade",
        action="store_true",
        help="grade the recorded conversations again (current expectations and grader): no"
        " agent request; the grader's exchanges recorded under <cassettes>/<skill>/regrade/",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="an A/A run: the with-skill configuration twice (with_skill, with_skill_repeat);"
        " writes calibration.json, the noise floor later benchmarks in --out show",
    )
    add_dry_run(parser, "print the conversations and the most requests they may make, make none")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from ...settings import load_all
    from ..client.eval_client import BenchmarkSpec, EvalClient

    load_all()
    values = command_values(args)
    ref = values("skills_changed_since")
    if ref:
        from ...changes import changed_since

        skill_dir = Path(args.skill_dir)
        if not changed_since([skill_dir], ref, skill_dir).kept:
            print(f"{skill_dir}: unchanged since {ref}: no eval run")
            return EXIT_OK
    client = EvalClient.from_settings(values, None if args.quiet else sys.stderr)
    if args.regrade:
        client = dataclasses.replace(
            client, options=dataclasses.replace(client.options, regrade=True)
        )
    spec = BenchmarkSpec(args.baseline, tuple(args.only or ()), args.calibrate)
    if args.dry_run:
        if args.triggers:
            print(client.plan_triggers(args.skill_dir))
        else:
            print(client.plan_benchmark(args.skill_dir, spec))
        return EXIT_OK
    if args.triggers:
        return _triggers(client, args.skill_dir, args.out)
    if client.options.models:
        return _several_models(client, args.skill_dir, args.out, spec)
    benchmark, stopped = interruptible(lambda: client.benchmark(args.skill_dir, spec, out=args.out))
    _calibration_line(benchmark)
    status = _shown(benchmark, args.out, client.options)
    return interrupted_status() if stopped else status


def interruptible(job: Callable[[], D]) -> tuple[D, bool]:
    """What ``job`` returned, or the document of what finished when Ctrl-C stopped it; and
    whether it was stopped."""
    from ..client.eval_client import EvalInterrupted

    try:
        return job(), False
    except EvalInterrupted as stop:
        return stop.document, True


def interrupted_status() -> int:
    print("interrupted: the runs that finished are written", file=sys.stderr)
    return EXIT_INTERRUPTED


def _triggers(client: EvalClient, skill_dir: Path, out: Path) -> int:
    """The trigger rates of the skill's queries, written to ``out`` and printed."""
    from ..triggers.trigger_text import triggers_text

    document, stopped = interruptible(lambda: client.triggers(skill_dir, out=out))
    text = triggers_text(document)
    for line in text.queries:
        print(line)
    _warn_if_local(document.runtime)
    if text.skipped:
        print(text.skipped)
    print(f"{text.summary}; wrote {out}")
    if stopped:
        return interrupted_status()
    return EXIT_SHORT if text.failed else EXIT_OK


def command_values(args: argparse.Namespace) -> FileSettings:
    """The settings of an eval: its flags, then the environment, then the configuration file
    pytest would read for the skill folder.  ``--model`` is skills_eval_models' flag: given
    once, it is the agent's model (skills_model)."""
    from ...config.file_settings import FileSettings
    from ...config.locate import ConfigLocator

    values = FileSettings.of_command(ConfigLocator(Path.cwd()).locate(args.skill_dir), args, "eval")
    models = values.flags["skills_eval_models"] or []
    values.flags["skills_model"] = models[0] if len(models) == 1 else None
    values.flags["skills_eval_models"] = models if len(models) > 1 else None
    values.flag_names["skills_model"] = values.flag_names["skills_eval_models"]
    return values


def _several_models(
    client: EvalClient, skill_dir: Path, out: Path, spec: BenchmarkSpec
) -> int:
    """The benchmark on each model, each printed as it is written, then every model's
    figures; the exit status of the worst."""
    from ..suite.per_model import MODELS_NAME

    benchmarks = []

    def each(document: BenchmarkDocument) -> None:
        print(f"model {document.metadata.executor_model}:")
        _calibration_line(document)
        benchmarks.append(document)

    overview, stopped = interruptible(
        lambda: client.models(skill_dir, spec, out=out, each=each)
    )
    statuses = [
        _shown(document, out / overview.folders[model], client.options)
        for model, document in zip(overview.models, benchmarks, strict=False)
    ]
    print(f"wrote {out / MODELS_NAME}")
    if stopped:
        return interrupted_status()
    return EXIT_SHORT if EXIT_SHORT in statuses else EXIT_OK


def _calibration_line(document: BenchmarkDocument) -> None:
    """An A/A run's noise floor, said once it is written."""
    from ..verdicts.benchmark import WITH_SKILL_REPEAT
    from ..verdicts.results_view import results_view

    if WITH_SKILL_REPEAT in (document.metadata.configurations or ()):
        print(f"calibration: {results_view(document).calibration} (the noise floor)")


def _shown(benchmark: BenchmarkDocument, out: Path, options: EvalOptions) -> int:
    """Print each eval's figures, the errors and what the grader, the limits and the budget
    left out (in benchmark.json's words); the exit status of one benchmark."""
    from ..verdicts.results_view import results_view, run_table

    view = results_view(benchmark)
    for shown in view.evals:
        print(f"eval {shown.eval_id} {shown.name}: {shown.rates} ({shown.bar})")
        print(f"  {shown.evidence}")
    if view.errored:
        print(run_table(view.errored), file=sys.stderr)
        print(view.first_error(), file=sys.stderr)
    _warn_if_local(benchmark.metadata.runtime or "")
    for note in (view.unsupported, view.grader_check, view.stopped):
        if note:
            print(note)
    for note in (view.same_grader, view.trust_grader):
        if note:
            print(f"warning: {note}", file=sys.stderr)
    if view.skipped:
        print(f"{view.skipped} (a budget of {options.max_tokens} tokens)")
    print(f"wrote {out / 'benchmark.json'}")
    return EXIT_OK if all(shown.meets_bar for shown in view.evals) else EXIT_SHORT


def _warn_if_local(runtime: str) -> None:
    from ..setup.eval_runtime import HOST_WARNING

    if runtime == "local":
        print(f"warning: {HOST_WARNING}", file=sys.stderr)
