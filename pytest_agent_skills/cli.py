"""The ``agent-skills`` command line.

Each subcommand is a :class:`Command`: a name, a function that adds its
arguments to a sub-parser, and a function that runs it and returns the exit
status.  ``validate`` is the first; others (e.g. ``run``) add an entry to
``COMMANDS``.  Exit status: 0 success, 1 the command found errors, 2 usage
errors (bad arguments, a path that does not exist).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import AgentSkillsError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(AgentSkillsError):
    """Bad command-line input; reported with exit status 2."""


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _configure_validate(parser: argparse.ArgumentParser) -> None:
    from .rules import FORMATTERS, PROFILES

    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH_OR_URL",
        help="a skill folder, a SKILL.md, a folder of many skills, or a URL of a skills root",
    )
    parser.add_argument(
        "--format", choices=sorted(FORMATTERS), default="text", help="output format"
    )
    parser.add_argument(
        "--profile", choices=sorted(PROFILES), default="spec", help="accepted field set"
    )
    parser.add_argument(
        "--available-tool",
        action="append",
        metavar="NAME",
        help="a tool a Tools: section may declare (repeat); when given, others are errors",
    )
    parser.add_argument(
        "--allow-unknown-fields",
        action="store_true",
        help="report unknown front-matter fields as warnings",
    )
    parser.add_argument(
        "--rule-severity",
        action="append",
        default=[],
        metavar="RULE=LEVEL",
        help="override a rule's severity: error, warning or off (repeat)",
    )
    parser.add_argument(
        "--refresh", action="store_true", help="download URL roots again instead of using the cache"
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file, not stdout")


def _run_validate(args: argparse.Namespace) -> int:
    from .rules import FORMATTERS, ValidationOptions, validate_paths
    from .sources import resolve_root

    options = ValidationOptions.build(
        available_tools=args.available_tool,
        profile=args.profile,
        allow_unknown_fields=args.allow_unknown_fields,
        severities=args.rule_severity,
    )
    paths: list[Path] = []
    for spec in args.paths:
        local = Path(spec)
        if "://" in spec or (local.is_file() and local.name.lower() != "skill.md"):
            # URLs and local archives (.zip, .tar, .tar.gz) are unpacked into the cache.
            paths.append(resolve_root(spec, refresh=args.refresh))
        elif local.exists():
            # Local paths are used as given, so reports show them as the user wrote them.
            paths.append(local)
        else:
            raise UsageError(f"{spec}: no such file or folder")
    reports = validate_paths(paths, options)
    if not reports:
        raise UsageError(
            f"no skill found under {', '.join(args.paths)} (a skill is a folder holding SKILL.md)"
        )
    text = FORMATTERS[args.format](reports)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK if all(report.ok for report in reports) else EXIT_FINDINGS


COMMANDS: tuple[Command, ...] = (
    Command(
        "validate", "check SKILL.md files against the rules", _configure_validate, _run_validate
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-skills", description="Tools for Agent Skills.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(run=command.run, parser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except AgentSkillsError as error:
        # Configuration, source and path problems are the caller's input: usage errors.
        args.parser.print_usage(sys.stderr)
        print(f"{args.parser.prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
