"""The ``agent-skills`` command line.

Each subcommand is a :class:`Command`: a name, a function that adds its
arguments to a sub-parser, and a function that runs it and returns the exit
status.  Exit status: 0 success, 1 the command found errors (or could not do
its job), 2 usage errors (bad arguments, a path that does not exist, a bad
configuration value).

``validate`` reads the same configuration as the pytest plugin: the ``skills_*``
options of the configuration file pytest would use for each path
(``pyproject.toml``'s ``[tool.pytest.ini_options]`` or ``[tool.pytest]``,
``pytest.ini``, ``tox.ini``, ``setup.cfg``) and the ``SKILLS_*`` environment
variables, with the same precedence (command line > environment > file).  With no
path it checks what a bare ``pytest`` run there collects (``testpaths``,
``norecursedirs``, the ``skills_roots``; :mod:`pytest_agent_skills.config.selection`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from .config.command_line import UsageError, add_paths_argument, check_output, write_report
from .errors import AgentSkillsError
from .targets import changed_targets, repository_root, targets

if TYPE_CHECKING:
    from .audit.catalogue import AuditRule
    from .links import SkippedLink

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class CommandFailed(AgentSkillsError):
    """The command could not do its job (e.g. build an image); reported with exit status 1."""


class Command(NamedTuple):
    """A subcommand: its name, its help, what adds its arguments, what runs it."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# --- validate ------------------------------------------------------------------------------------


def _configure_validate(parser: argparse.ArgumentParser) -> None:
    from .config.file_settings import add_command_flags
    from .rules import FORMATTERS

    add_paths_argument(parser)
    parser.add_argument(
        "--format",
        choices=sorted(FORMATTERS),
        default="text",
        help="output format: text, json, sarif (code scanning), github (workflow annotations),"
        " junit (JUnit XML)",
    )
    # The flags of the settings validate takes (--profile, --refresh, ...).
    add_command_flags(parser, "validate")
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when errors are found (report only)",
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file, not stdout")
    parser.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        metavar="N",
        help="processes that check the skills, at most: a number, or auto (the default: on Linux"
        " one per idle processor this process may use, from the tasks runnable now, elsewhere 1);"
        " each takes 70 skills at least, so fewer than 140 are checked in this process, as"
        " with 1",
    )


def _jobs(value: str) -> int | None:
    """A ``--jobs`` value: a positive number, or ``auto`` (None: decided when it runs)."""
    if value == "auto":
        return None
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise argparse.ArgumentTypeError(f"expected a positive number or 'auto', got {value!r}")


def _run_validate(args: argparse.Namespace) -> int:
    from .config.file_settings import command_flag_values
    from .config.scopes import Scopes
    from .links import describe_all
    from .listings import FolderListings
    from .rules import FORMATTERS, default_jobs, to_sarif, validate_paths

    check_output(args.output)
    # Each folder is listed once: to locate the configuration files, find and check the skills.
    listings = FolderListings()
    # Each path is checked with the configuration pytest would read for it.
    scopes = Scopes(command_flag_values(args, "validate"), listings=listings)
    skipped: list[SkippedLink] = []  # linked folders the walks did not enter
    found = targets(args.paths, scopes, skipped)
    ref = scopes.for_path(".").settings("skills_changed_since")
    if ref:
        found = changed_targets(found, ref, listings)
    options = {path: scope.validation for path, scope in found.items()}
    jobs = args.jobs or default_jobs()
    reports = validate_paths(found, options.__getitem__, skipped, listings, jobs)
    for line in describe_all(skipped):  # once per link, beside the report
        sys.stderr.write(f"agent-skills: {line}\n")
    if not reports and not ref:
        from .redaction import mask_urls  # (an error's import: a run with skills needs none)

        specs = args.paths or [".", *scopes.for_path(".").settings("skills_roots")]
        raise UsageError(
            f"no skill found under {mask_urls(', '.join(specs))} (a skill is a folder holding"
            " SKILL.md)"
        )
    if args.format == "sarif":  # URIs from the repository root, wherever this runs from
        text = to_sarif(reports, base=repository_root(scopes))
    else:
        text = FORMATTERS[args.format](reports)
    write_report(args.output, text)
    return EXIT_OK if args.exit_zero or all(report.ok for report in reports) else EXIT_FINDINGS


# --- rules and rule ID ---------------------------------------------------------------------------


def _run_rules(args: argparse.Namespace) -> int:
    from .audit.catalogue import AUDIT_RULES
    from .rules import RULES

    width = max(len(rule_id) for rule_id in [*RULES, *AUDIT_RULES])
    for rule in RULES.values():
        print(f"{rule.id:<{width}}  {rule.check:<11}  {rule.severity!s:<7}  {rule.summary}")
    print(f"{len(RULES)} rules; 'agent-skills rule ID' shows one rule's documentation")
    print()
    print("audit rules (agent-skills audit):")
    for audit_rule in AUDIT_RULES.values():
        print(
            f"{audit_rule.id:<{width}}  {audit_rule.family:<20}  {audit_rule.severity:<8}"
            f"  {audit_rule.summary}"
        )
    print(f"{len(AUDIT_RULES)} audit rules")
    return EXIT_OK


def _configure_rule(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule_id", metavar="ID", help="a rule id, e.g. name-charset")


def _run_rule(args: argparse.Namespace) -> int:
    import difflib

    from .audit.catalogue import AUDIT_RULES
    from .rules import RULES
    from .rules.docs import rule_doc

    if args.rule_id in AUDIT_RULES:
        return _audit_rule(AUDIT_RULES[args.rule_id])
    rule = RULES.get(args.rule_id)
    if rule is None:
        close = difflib.get_close_matches(args.rule_id, [*RULES, *AUDIT_RULES], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(
            f"unknown rule id {args.rule_id!r}; {hint}'agent-skills rules' lists every rule"
        )
    doc = rule_doc(rule.id)
    print(f"{rule.id}: {rule.severity}, check '{rule.check}', source: {rule.source}")
    print(f"  {rule.summary}")
    print()
    print(f"What it finds: {doc.finds}")
    print(f"How to fix: {doc.fix}")
    print()
    print(
        f"Change its severity: --rule-severity {rule.id}=warning|off (agent-skills validate),"
        f" --skills-rule-severity or the skills_rule_severity option (pytest)."
    )
    return EXIT_OK


def _audit_rule(rule: AuditRule) -> int:
    print(f"{rule.id}: audit rule, {rule.severity} where it shows intent, family '{rule.family}'")
    print(f"  {rule.summary}")
    print()
    print(f"What it finds: {rule.finds}")
    print(f"How to fix: {rule.fix}")
    print()
    print(
        f"Skip it: --ignore {rule.id} (agent-skills audit) or skills_audit_ignore; silence it"
        f" for some skills with a reason: skills_audit_suppress = 'GLOB:{rule.id} -- REASON'."
        " See docs/audit.md."
    )
    return EXIT_OK


# --- docker-image --------------------------------------------------------------------------------


def _configure_docker_image(parser: argparse.ArgumentParser) -> None:
    from .config.file_settings import add_command_flags
    from .docker_image import DEFAULT_CACHE_DIR

    # --image: the image of the docker runtime (skills_docker_image), which pytest then runs.
    add_command_flags(parser, "docker-image")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="where the root file system tarball is kept (default: $SKILLS_IMAGE_CACHE or"
        f" {DEFAULT_CACHE_DIR})",
    )


def _log(line: str) -> None:
    print(f"agent-skills: {line}", file=sys.stderr)


def _run_docker_image(args: argparse.Namespace) -> int:
    from .config.file_settings import FileSettings
    from .config.locate import ConfigLocator
    from .docker_image import ImageBuildError, ImageRequest, cache_dir_from_env, ensure_image
    from .workspace import RuntimeUnavailableError

    here = Path.cwd()
    values = FileSettings.of_command(ConfigLocator(here).locate(here), args, "docker-image")
    request = ImageRequest(values("skills_docker_image"), args.cache_dir or cache_dir_from_env())
    try:
        done = ensure_image(request, log=_log)
    except (ImageBuildError, RuntimeUnavailableError) as error:
        raise CommandFailed(str(error)) from None
    print(done)
    return EXIT_OK


def _skill_targets(paths: Sequence[str]) -> list[Path]:
    """The paths validate would check for ``paths`` (with none: what ``pytest`` here
    collects, then the skills_roots)."""
    from .config.scopes import Scopes
    from .listings import FolderListings

    return list(targets(paths, Scopes({}, listings=FolderListings()), []))


def _delegated(name: str, summary: str, module: str, on_skills: bool = False) -> Command:
    """The command whose ``configure`` and ``run`` are those of ``pytest_agent_skills.<module>``
    (loaded when the command is parsed or runs); ``on_skills``: its ``run`` is also given the
    skill paths as validate finds them."""

    def loaded() -> Any:
        return importlib.import_module(f"pytest_agent_skills.{module}")

    def run(args: argparse.Namespace) -> int:
        command = loaded()
        if on_skills:
            return int(command.run(args, _skill_targets(args.paths)))
        return int(command.run(args))

    return Command(name, summary, lambda parser: loaded().configure(parser), run)


COMMANDS: tuple[Command, ...] = (
    Command(
        "validate", "check SKILL.md files against the rules", _configure_validate, _run_validate
    ),
    _delegated(
        "audit",
        "find malicious and dangerous skills (hidden text, injected instructions, downloaded"
        " or decoded code, credential theft, persistence, reverse shells) before an agent"
        " loads them; --dynamic detonates them in the sandbox",
        "audit_command",
    ),
    Command("rules", "list every validation rule", lambda parser: None, _run_rules),
    Command("rule", "show the documentation of one rule", _configure_rule, _run_rule),
    Command(
        "docker-image",
        "build the offline Docker test image of the docker runtime (Debian 12 minbase with"
        " python3; debootstrap, as root, once)",
        _configure_docker_image,
        _run_docker_image,
    ),
    _delegated(
        "eval",
        "run a skill's evals/evals.json with and without the skill (or its evals/triggers.json"
        " with --triggers), graded; replayed from cassettes, or recorded with --record",
        "evals.commands.eval_command",
    ),
    _delegated(
        "grader-check",
        "test the grader model on the shipped gold set before trusting it: accuracy, false-pass"
        " and false-fail rates, unsupported passes; replayed from cassettes, or recorded",
        "evals.commands.grader_check_command",
    ),
    _delegated(
        "triggers",
        "run every skill's evals/triggers.json with all the skills offered: which skill loads"
        " for each query, precision and recall per skill, collisions; replayed from cassettes",
        "evals.commands.triggers_command",
        on_skills=True,
    ),
    _delegated(
        "improve-description",
        "improve a skill's description by its trigger queries: a model proposes, trigger runs"
        " score on a train and a held-out split, the best by held-out score is kept",
        "evals.commands.improve_command",
    ),
    _delegated(
        "schema",
        "list the JSON Schemas of the documents agent-skills writes and reads (each written"
        " document names its own in $schema); NAME prints one",
        "evals.commands.schema_command",
    ),
    _delegated(
        "mutate",
        "make mutants of a skill (a deleted step, a wrong number, a narrowed description...),"
        " run its scenarios or tests against each: which did the checks notice, the mutation"
        " score",
        "mutate.command",
    ),
    _delegated(
        "tokens",
        "the tokens each skill costs an agent (description on every request, body on load,"
        " each doc), over the budgets; --compare REF: the change per skill against a git ref",
        "gate.tokens_command",
        on_skills=True,
    ),
    _delegated(
        "coverage",
        "which skills have evals, trigger queries and scenarios, and recordings of each;"
        " --min-coverage: the share of skills that must be covered",
        "gate.coverage_command",
        on_skills=True,
    ),
    _delegated(
        "ci",
        "the CI gate (the GitHub Action's step): validate, tokens, coverage, the eval and"
        " trigger replays, pytest; SARIF, a Markdown job summary and the step's outputs",
        "gate.ci_command",
        on_skills=True,
    ),
)


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (finding the
    distribution walks the import path, which no other command needs)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: Any) -> None:
        shown = "show the version and exit"
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=shown)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from . import __version__

        print(f"agent-skills {__version__}")
        parser.exit()


def build_parser(command: str | None = None, alone: bool = False) -> argparse.ArgumentParser:
    """The parser of every subcommand; with ``command``, only that one's arguments are added
    (the others' would load what they describe: rule tables, the image builder), and with
    ``alone`` no other subcommand at all (argv starts with ``command``: nothing can ask for
    the list of subcommands)."""
    parser = argparse.ArgumentParser(prog="agent-skills", description="Tools for Agent Skills.")
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for each in COMMANDS:
        if alone and each.name != command:
            continue
        sub = subparsers.add_parser(each.name, help=each.help, description=each.help)
        if command is None or each.name == command:
            each.configure(sub)
        sub.set_defaults(run=each.run, parser=sub)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs (its first word that is not an option), if it names one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if any(each.name == first for each in COMMANDS) else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agent-skills ARGV`` and return the exit status.  Called without ``argv`` (as the
    ``agent-skills`` program is), a ``validate`` or ``audit`` run ends the process itself once
    its output is written (see :func:`_exit_at_once`), with the garbage collector off."""
    words = sys.argv[1:] if argv is None else list(argv)
    command = _command_named(words)
    # No subcommand named (--help, --version, a typo): argparse answers from the names alone.
    parser = build_parser(command, alone=words[0] == command) if command else build_parser("")
    args = parser.parse_args(words)
    program = argv is None and command in ("validate", "audit")
    if program:
        # Everything validation (or the audit) makes lives until the report is written, then
        # the process ends: the collector would only walk every skill read so far again and
        # again.
        gc.disable()
    status = _run(args)
    if program:
        _exit_at_once(status)
    return status


def _run(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except BrokenPipeError:  # `agent-skills rules | head`: the reader has all it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes stdout at exit
        return EXIT_OK
    except CommandFailed as error:
        print(f"{args.parser.prog}: error: {error}", file=sys.stderr)
        return EXIT_FINDINGS
    except AgentSkillsError as error:
        # Configuration, source and path problems are the caller's input: usage errors.
        args.parser.print_usage(sys.stderr)
        print(f"{args.parser.prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


def _exit_at_once(status: int) -> NoReturn:
    """Flush the output and end the process without tearing the interpreter down: the teardown
    would free the skills, findings and listings of thousands of skills one object at a time,
    work the user waits for with nothing to gain, since nothing is left to do (every file is
    closed, no exit handler of ours is pending)."""
    for stream in (sys.stdout, sys.stderr):
        # A reader that went away (`| head`) has all it wanted.
        with contextlib.suppress(OSError):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
