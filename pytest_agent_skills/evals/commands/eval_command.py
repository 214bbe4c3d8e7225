"""``agent-skills eval SKILL_DIR``: run a skill's evals (or its trigger queries), write the
output folder, exit 0 when every eval meets its bar, 1 when one falls short, 2 on usage
errors, 130 when stopped by Ctrl-C (what finished is written)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...config.file_settings import FileSettings

EXIT_OK, EXIT_SHORT, EXIT_INTERRUPTED = 0, 1, 130
#: ``--baseline git:REF``: the skill as it was at a git ref.
GIT_PREFIX = "git:"


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
    from ..setup.eval_options import eval_options
    from ..suite.suite_runner import EvalRequest

    load_all()
    values = command_values(args)
    ref = values("skills_changed_since")
    if ref:
        from ...changes import changed_since

        skill_dir = Path(args.skill_dir)
        if not changed_since([skill_dir], ref, skill_dir).kept:
            print(f"{skill_dir}: unchanged since {ref}: no eval run")
            return EXIT_OK
    options = eval_options(values)
    if args.regrade:
        options = dataclasses.replace(options, regrade=True)
    with tempfile.TemporaryDirectory(prefix="agent-skills-baseline-") as scratch:
        baseline, ref, commit = baseline_folder(args.baseline, args.skill_dir, Path(scratch))
        request = EvalRequest(
            args.skill_dir,
            options,
            baseline=baseline,
            only=tuple(args.only or ()),
            progress=None if args.quiet else sys.stderr,
            calibrate=args.calibrate,
            baseline_ref=ref,
            baseline_commit=commit,
        )
        return _run_request(args, request, options)


def baseline_folder(
    spec: str | None, skill_dir: Path, scratch: Path
) -> tuple[Path | None, str, str]:
    """The baseline folder of ``--baseline`` (None without one) and, for ``git:REF``, the ref
    and the commit: the skill folder as it was at the ref, unpacked under ``scratch``."""
    if spec is None or not spec.startswith(GIT_PREFIX):
        return (Path(spec) if spec is not None else None), "", ""
    from ...gitref import export_folder

    ref = spec.removeprefix(GIT_PREFIX)
    folder = scratch / Path(skill_dir).resolve().name
    snapshot = export_folder(ref, Path(skill_dir), folder, f"--baseline {spec}")
    print(f"baseline: {skill_dir} as it was at {ref} (commit {snapshot.commit})", file=sys.stderr)
    return snapshot.path, ref, snapshot.commit


def _run_request(args: argparse.Namespace, request: Any, options: Any) -> int:
    """Run ``request`` as the arguments ask: a dry run, the trigger runs, the benchmark."""
    from ..suite.output_folder import write_report, write_triggers
    from ..suite.suite_runner import dry_run, run_benchmark, run_triggers
    from ..triggers.trigger_text import triggers_text

    out: Path = args.out
    if args.dry_run:
        print(dry_run(request, triggers=args.triggers))
        return EXIT_OK
    if args.triggers:
        triggers = run_triggers(request)
        write_triggers(out, triggers.document)
        write_report(out)
        text = triggers_text(triggers.document)
        for line in text.queries:
            print(line)
        _warn_if_local(triggers.document["runtime"])
        if text.skipped:
            print(text.skipped)
        print(f"{text.summary}; wrote {out}")
        if triggers.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_SHORT if text.failed else EXIT_OK
    if options.models:
        return _several_models(request, out, args.calibrate)
    outcome = run_benchmark(request)
    write_outcome(out, outcome, args.calibrate)
    return _shown(outcome, out)


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


def write_outcome(out: Path, outcome: Any, calibrate: bool) -> None:
    """One benchmark's folder: calibration.json (an A/A run) or the floor of an earlier one,
    benchmark.json and .md, the runs' folders, report.html."""
    from ..suite.calibration import attach_calibration, write_calibration
    from ..suite.output_folder import write_benchmark, write_report
    from ..verdicts.results_view import results_view

    if calibrate:
        write_calibration(out, outcome.document, outcome.runs)
        print(f"calibration: {results_view(outcome.document).calibration} (the noise floor)")
    else:
        attach_calibration(out, outcome.document)
    write_benchmark(out, outcome.document, outcome.runs, outcome.evals)
    write_report(out)


def _several_models(request: Any, out: Path, calibrate: bool) -> int:
    from ..documents.document_io import write_data
    from ..documents.overview import ModelsDocument
    from ..suite.output_folder import write_report
    from ..suite.per_model import MODELS_NAME, run_models

    def write(folder: Path, outcome: Any) -> None:
        print(f"model {outcome.document['metadata']['executor_model']}:")
        write_outcome(folder, outcome, calibrate)

    overview, outcomes = run_models(request, request.options.models, write, out)
    statuses = [
        _shown(outcome, out / overview["folders"][model]) for model, outcome in outcomes.items()
    ]
    write_data(out / MODELS_NAME, ModelsDocument, overview)
    write_report(out)
    print(f"wrote {out / MODELS_NAME}")
    if EXIT_INTERRUPTED in statuses:
        return EXIT_INTERRUPTED
    return EXIT_SHORT if EXIT_SHORT in statuses else EXIT_OK


def _shown(outcome: Any, out: Path) -> int:
    """Print each eval's figures, the errors and what the grader, the limits and the budget
    left out (in benchmark.json's words); the exit status of one benchmark."""
    from ..verdicts.results_view import results_view, run_table

    view = results_view(outcome.document)
    for shown in view.evals:
        print(f"eval {shown.eval_id} {shown.name}: {shown.rates} ({shown.bar})")
        print(f"  {shown.evidence}")
    if view.errored:
        print(run_table(view.errored), file=sys.stderr)
        print(view.first_error(), file=sys.stderr)
    _warn_if_local(outcome.document["metadata"]["runtime"])
    for note in (view.unsupported, view.grader_check, view.stopped):
        if note:
            print(note)
    for note in (view.same_grader, view.trust_grader):
        if note:
            print(f"warning: {note}", file=sys.stderr)
    if view.skipped:
        print(f"{view.skipped} ({outcome.tokens} tokens used)")
    print(f"wrote {out / 'benchmark.json'}")
    if outcome.interrupted:
        print("interrupted: the runs that finished are written", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if all(shown.meets_bar for shown in view.evals) else EXIT_SHORT


def _warn_if_local(runtime: str) -> None:
    from ..setup.eval_runtime import HOST_WARNING

    if runtime == "local":
        print(f"warning: {HOST_WARNING}", file=sys.stderr)
