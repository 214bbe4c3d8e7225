"""``agent-skills eval SKILL_DIR``: run a skill's evals (or its trigger queries), write the
output folder, exit 0 when every eval meets its bar, 1 when one falls short, 2 on usage
errors, 130 when stopped by Ctrl-C (what finished is written)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from ...workspace.names import RUNTIME_NAMES

EXIT_OK, EXIT_SHORT, EXIT_INTERRUPTED = 0, 1, 130

#: The plugin setting each flag sets (ini name -> the flag; argparse's dest is its name with
#: underscores), named in messages about its value.
EVAL_FLAGS = {
    "skills_eval_runs": "--runs",
    "skills_eval_jobs": "--jobs",
    "skills_record": "--record",
    "skills_upstream_url": "--upstream-url",
    "skills_model": "--model",
    "skills_grader_model": "--grader-model",
    "skills_model_params": "--model-param",
    "skills_grader_params": "--grader-param",
    "skills_eval_min_pass_rate": "--min-pass-rate",
    "skills_eval_require": "--require",
    "skills_eval_models": "--model",
    "skills_eval_grader_runs": "--grader-runs",
    "skills_eval_threshold": "--threshold",
    "skills_eval_cassettes": "--cassettes",
    "skills_eval_attempts": "--attempts",
    "skills_eval_runtime": "--runtime",
    "skills_eval_max_turns": "--max-turns",
    "skills_eval_max_run_tokens": "--max-run-tokens",
    "skills_eval_max_tokens": "--max-tokens",
    "skills_eval_allow_invalid": "--allow-invalid-skills",
}


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill folder")
    parser.add_argument("--out", type=Path, default=Path("evals-out"), help="output folder")
    parser.add_argument(
        "--triggers",
        action="store_true",
        help="measure the trigger rate of evals/triggers.json instead of running evals.json",
    )
    parser.add_argument(
        "--allow-invalid-skills",
        action="store_const",
        const=True,
        help="offer skills whose front matter is invalid anyway (by default they stop the run"
        " before any request), saying what the model will see of them",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="compare against this earlier version of the skill instead of without it",
    )
    parser.add_argument(
        "--eval", type=int, action="append", dest="only", metavar="ID", help="only this eval"
    )
    parser.add_argument("--runs", type=int, metavar="N", help="runs per configuration (3)")
    parser.add_argument("--jobs", type=int, metavar="J", help="runs at once (4)")
    parser.add_argument(
        "--record",
        choices=("none", "once", "new", "all"),
        help="cassette record mode (none: replay offline, the default)",
    )
    parser.add_argument("--upstream-url", metavar="BASE_URL", help="endpoint to record from")
    parser.add_argument(
        "--model",
        action="append",
        help="model name of the agent; repeated: the evals run on each model, DIR/<model>/ and"
        " DIR/models.json",
    )
    parser.add_argument("--grader-model", metavar="MODEL", help="model of the grader")
    parser.add_argument(
        "--model-param",
        action="append",
        metavar="NAME=JSON",
        help="a field added to every agent request (repeatable): temperature=0, seed=7,"
        ' max_tokens=512, tool_choice="auto"',
    )
    parser.add_argument(
        "--grader-param",
        action="append",
        metavar="NAME=JSON",
        help="a field added to every grader request (repeatable)",
    )
    parser.add_argument("--min-pass-rate", type=float, metavar="RATE", help="bar (1.0)")
    parser.add_argument(
        "--require",
        choices=("none", "better"),
        help="better: an eval passes only when the 95%% interval of its delta is above 0",
    )
    parser.add_argument("--threshold", type=float, metavar="RATE", help="trigger rate bar (0.5)")
    parser.add_argument("--cassettes", metavar="DIR", help="cassette folder")
    parser.add_argument("--attempts", type=int, metavar="N", help="upstream attempts (5)")
    parser.add_argument(
        "--grader-runs",
        type=int,
        metavar="K",
        help="grade each transcript K times: the grader's agreement with itself (1)",
    )
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
    parser.add_argument(
        "--runtime",
        choices=RUNTIME_NAMES,
        help="where the model's commands run (default: sandbox, else docker; local only when"
        " asked: it runs them on this machine)",
    )
    parser.add_argument(
        "--max-turns", type=int, metavar="N", help="model turns a run may take (30)"
    )
    parser.add_argument(
        "--max-run-tokens", type=int, metavar="N", help="tokens a run may use before it stops"
    )
    parser.add_argument(
        "--max-tokens", type=int, metavar="N", help="tokens the eval may use: no run starts after"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the conversations and the most requests they may make, make none",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    from ...config.file_settings import FileSettings
    from ...config.locate import ConfigLocator
    from ...settings import load_all
    from ..setup.eval_options import eval_options
    from ..suite.output_folder import write_report, write_triggers
    from ..suite.suite_runner import EvalRequest, dry_run, run_benchmark, run_triggers

    load_all()
    flags: dict[str, Any] = {ini: getattr(args, _dest(flag)) for ini, flag in EVAL_FLAGS.items()}
    models = args.model or []
    flags["skills_model"] = models[0] if len(models) == 1 else None
    flags["skills_eval_models"] = models if len(models) > 1 else None
    values = FileSettings(
        ConfigLocator(Path.cwd()).locate(args.skill_dir), flags, flag_names=EVAL_FLAGS
    )
    options = eval_options(values)
    if args.regrade:
        options = dataclasses.replace(options, regrade=True)
    request = EvalRequest(
        args.skill_dir,
        options,
        baseline=args.baseline,
        only=tuple(args.only or ()),
        progress=None if args.quiet else sys.stderr,
        calibrate=args.calibrate,
    )
    out: Path = args.out
    if args.dry_run:
        print(dry_run(request, triggers=args.triggers))
        return EXIT_OK
    if args.triggers:
        triggers = run_triggers(request)
        write_triggers(out, triggers.document)
        write_report(out)
        for result in triggers.document["results"]:
            verdict = "pass" if result["pass"] else "FAIL"
            print(
                f"{verdict}  rate {result['trigger_rate']:.2f} ({result['triggers']}/"
                f"{result['runs']}), should{'' if result['should_trigger'] else ' not'}"
                f" trigger: {result['query']}"
            )
        _warn_if_local(triggers.document["runtime"])
        summary = triggers.document["summary"]
        left_out = sum(result["skipped"] for result in triggers.document["results"])
        if left_out:
            print(f"{left_out} run(s) skipped: the token budget (--max-tokens) was spent")
        print(f"{summary['passed']}/{summary['total']} trigger queries pass; wrote {out}")
        if triggers.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_OK if summary["failed"] == 0 else EXIT_SHORT
    if options.models:
        return _several_models(request, out, args.calibrate)
    outcome = run_benchmark(request)
    write_outcome(out, outcome, args.calibrate)
    return _shown(outcome, out)


def write_outcome(out: Path, outcome: Any, calibrate: bool) -> None:
    """One benchmark's folder: calibration.json (an A/A run) or the floor of an earlier one,
    benchmark.json and .md, the runs' folders, report.html."""
    from ..suite.calibration import attach_calibration, write_calibration
    from ..suite.output_folder import write_benchmark, write_report
    from ..verdicts.evidence import shown_interval

    if calibrate:
        write_calibration(out, outcome.document, outcome.runs)
        floor = outcome.document["calibration"]
        print(
            f"calibration: {floor['flipped']} of {floor['compared']} expectation verdicts flip"
            f" between with_skill and with_skill_repeat; delta 95% interval"
            f" {shown_interval(floor['delta_ci95'])} (the noise floor)"
        )
    else:
        attach_calibration(out, outcome.document)
    write_benchmark(out, outcome.document, outcome.runs, outcome.evals)
    write_report(out)


def _several_models(request: Any, out: Path, calibrate: bool) -> int:
    from ..suite.output_folder import write_json, write_report
    from ..suite.per_model import MODELS_NAME, run_models

    def write(folder: Path, outcome: Any) -> None:
        print(f"model {outcome.document['metadata']['executor_model']}:")
        write_outcome(folder, outcome, calibrate)

    overview, outcomes = run_models(request, request.options.models, write, out)
    statuses = [
        _shown(outcome, out / overview["folders"][model]) for model, outcome in outcomes.items()
    ]
    write_json(out / MODELS_NAME, overview)
    write_report(out)
    print(f"wrote {out / MODELS_NAME}")
    if EXIT_INTERRUPTED in statuses:
        return EXIT_INTERRUPTED
    return EXIT_SHORT if EXIT_SHORT in statuses else EXIT_OK


def _shown(outcome: Any, out: Path) -> int:
    """Print each eval's figures and the errors; the exit status of one benchmark."""
    from ..verdicts.benchmark import run_table
    from ..verdicts.evidence import evidence_line

    short = [verdict for verdict in outcome.document["evals"] if not verdict["meets_bar"]]
    for verdict in outcome.document["evals"]:
        rates = ", ".join(
            f"{name} {part['mean']:.2f}±{part['stddev']:.2f}"
            for name, part in verdict["pass_rate"].items()
        )
        shown = "met" if verdict["meets_bar"] else "NOT met: " + "; ".join(verdict["problems"])
        print(f"eval {verdict['eval_id']} {verdict['eval_name']}: {rates} ({shown})")
        print(f"  {evidence_line(verdict)}")
    errors = [run for run in outcome.document["runs"] if run["error"]]
    if errors:
        print(run_table(errors), file=sys.stderr)
        print(
            f"first error ({errors[0]['run_dir']}):\n{errors[0]['error']['message']}",
            file=sys.stderr,
        )
    _warn_if_local(outcome.document["metadata"]["runtime"])
    runs = outcome.document["runs"]
    stopped = [run for run in runs if run["result"]["stop_reason"] and not run["skipped"]]
    if stopped:
        print(f"{len(stopped)} run(s) stopped by a limit (failed runs, graded on what they did)")
    left_out = outcome.document["metadata"]["runs_skipped"]
    if left_out:
        print(
            f"{left_out} of {len(runs)} run(s) skipped: the token budget (--max-tokens) was"
            f" spent ({outcome.tokens} tokens used); neither passes nor errors"
        )
    print(f"wrote {out / 'benchmark.json'}")
    if outcome.interrupted:
        print("interrupted: the runs that finished are written", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_SHORT if short else EXIT_OK


def _warn_if_local(runtime: str) -> None:
    from ..setup.eval_runtime import HOST_WARNING

    if runtime == "local":
        print(f"warning: {HOST_WARNING}", file=sys.stderr)
