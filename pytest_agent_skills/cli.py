"""The ``agent-skills`` command line.

Each subcommand is a :class:`Command`: a name, a function that adds its
arguments to a sub-parser, and a function that runs it and returns the exit
status.  Exit status: 0 success, 1 the command found errors (or could not do
its job), 2 usage errors (bad arguments, a path that does not exist, a bad
configuration value).

``validate`` reads the same configuration as the pytest plugin: the ``skills_*``
options of the configuration file pytest would use for the paths
(``pyproject.toml``'s ``[tool.pytest.ini_options]`` or ``[tool.pytest]``,
``pytest.ini``, ``tox.ini``, ``setup.cfg``) and the ``SKILLS_*`` environment
variables, with the same precedence (command line > environment > file).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .errors import AgentSkillsError
from .redaction import mask_urls

if TYPE_CHECKING:
    from .config.file_settings import FileSettings

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(AgentSkillsError):
    """Bad command-line input; reported with exit status 2."""


class CommandFailed(AgentSkillsError):
    """The command could not do its job (e.g. build an image); reported with exit status 1."""


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# --- validate ------------------------------------------------------------------------------------

#: The plugin settings a validate flag sets (ini name -> argparse dest).
VALIDATE_FLAGS = {
    "skills_profile": "profile",
    "skills_available_tools": "available_tool",
    "skills_allow_unknown_fields": "allow_unknown_fields",
    "skills_rule_severity": "rule_severity",
    "skills_per_path_ignores": "per_path_ignore",
    "skills_refresh": "refresh",
}


def _configure_validate(parser: argparse.ArgumentParser) -> None:
    from .rules import FORMATTERS, PROFILES

    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_URL",
        help="a skill folder, a SKILL.md, a folder of many skills, or a URL of a skills root"
        " (default: '.' and the skills_roots of the pytest configuration)",
    )
    parser.add_argument(
        "--format",
        choices=sorted(FORMATTERS),
        default="text",
        help="output format: text, json, sarif (code scanning), github (workflow annotations),"
        " junit (JUnit XML)",
    )
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        help="accepted field set and runtime rules (default: spec; trpc adds the tRPC runtime's"
        " Tools: rules)",
    )
    parser.add_argument(
        "--available-tool",
        action="append",
        metavar="NAME",
        help="a tool a Tools: section may declare (repeat); when given, others are errors",
    )
    parser.add_argument(
        "--allow-unknown-fields",
        action="store_const",
        const=True,
        help="report unknown front-matter fields as warnings",
    )
    parser.add_argument(
        "--rule-severity",
        action="append",
        metavar="RULE=LEVEL",
        help="override a rule's severity: error, warning or off (repeat)",
    )
    parser.add_argument(
        "--per-path-ignore",
        action="append",
        metavar="GLOB:RULE[,RULE]",
        help="ignore rules for the skills a glob matches, paths from the configuration file's"
        " folder (else the current one) (repeat)",
    )
    parser.add_argument(
        "--refresh",
        action="store_const",
        const=True,
        help="download URL roots again instead of using the cache",
    )
    parser.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when errors are found (report only)",
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file, not stdout")


def validate_settings(args: argparse.Namespace) -> FileSettings:
    """The plugin's settings as ``agent-skills validate`` sees them: its flags, then the
    environment, then the configuration file pytest would read for the paths."""
    from .config import roots, sources, validation  # noqa: F401 - they declare the settings
    from .config.file_settings import FileSettings
    from .settings import ConfigFile

    flags = {ini: getattr(args, dest) for ini, dest in VALIDATE_FLAGS.items()}
    return FileSettings(ConfigFile.locate(args.paths or ["."]), flags)


def _run_validate(args: argparse.Namespace) -> int:
    from .config.sources import source_options
    from .config.validation import validation_options
    from .rules import FORMATTERS, validate_paths
    from .sources import resolve_root, use_options

    if args.output is not None:
        _check_output(args.output)
    setting = validate_settings(args)
    options = validation_options(setting)
    refresh = bool(setting("skills_refresh"))
    specs = list(args.paths) or [".", *setting("skills_roots")]
    paths: list[Path] = []
    with use_options(source_options(setting, Path.cwd())):
        for index, spec in enumerate(specs):
            configured = not args.paths and index > 0  # a skills_roots entry of the file
            # A configured root is relative to the file's folder; shown relative to here.
            local = Path(os.path.relpath(setting.base_dir / spec)) if configured else Path(spec)
            if "://" in spec or (local.is_file() and local.name.lower() != "skill.md"):
                # URLs and local archives (.zip, .tar, .tar.gz) are unpacked into the cache.
                base = setting.base_dir if configured else None
                paths.append(resolve_root(spec, refresh=refresh, base_dir=base))
            elif local.exists():
                # Local paths are used as given, so reports show them as the user wrote them.
                paths.append(local)
            elif configured:
                raise UsageError(f"{setting.config.path}: skills_roots: {spec}: no such folder")
            else:
                raise UsageError(f"{spec}: no such file or folder")
        reports = validate_paths(paths, options)
    if not reports:
        raise UsageError(
            f"no skill found under {mask_urls(', '.join(specs))} (a skill is a folder holding"
            " SKILL.md)"
        )
    text = FORMATTERS[args.format](reports)
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as error:
            raise UsageError(
                f"-o {args.output}: cannot write the report ({error.strerror or error})"
            ) from None
    else:
        sys.stdout.write(text)
    if args.exit_zero:
        return EXIT_OK
    return EXIT_OK if all(report.ok for report in reports) else EXIT_FINDINGS


def _check_output(path: Path) -> None:
    """A usage error, before any work, for an ``-o`` path that cannot be a report file."""
    if path.is_dir():
        raise UsageError(f"-o {path}: is a folder; give the path of the report file to write")
    if not path.parent.is_dir():
        raise UsageError(
            f"-o {path}: the folder {path.parent} does not exist; create it first"
        )


# --- rules and rule ID ---------------------------------------------------------------------------


def _configure_rules(parser: argparse.ArgumentParser) -> None:
    del parser  # no arguments


def _run_rules(args: argparse.Namespace) -> int:
    from .rules import RULES

    width = max(len(rule_id) for rule_id in RULES)
    for rule in RULES.values():
        print(f"{rule.id:<{width}}  {rule.check:<11}  {rule.severity!s:<7}  {rule.summary}")
    print(f"{len(RULES)} rules; 'agent-skills rule ID' shows one rule's documentation")
    return EXIT_OK


def _configure_rule(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule_id", metavar="ID", help="a rule id, e.g. name-charset")


def _run_rule(args: argparse.Namespace) -> int:
    from .rules import RULES
    from .rules.docs import rule_doc

    rule = RULES.get(args.rule_id)
    if rule is None:
        close = difflib.get_close_matches(args.rule_id, RULES, n=1)
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


# --- docker-image --------------------------------------------------------------------------------


def _configure_docker_image(parser: argparse.ArgumentParser) -> None:
    from .docker_image import DEFAULT_CACHE_DIR
    from .workspace import DEFAULT_DOCKER_IMAGE

    parser.add_argument(
        "--image",
        default=DEFAULT_DOCKER_IMAGE,
        help=f"image name to build (default: {DEFAULT_DOCKER_IMAGE}); an image of that name not"
        " built by agent-skills is never replaced",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="where the root file system tarball is kept (default: $SKILLS_IMAGE_CACHE or"
        f" {DEFAULT_CACHE_DIR})",
    )


def _log(line: str) -> None:
    print(f"agent-skills: {line}", file=sys.stderr)


def _run_docker_image(args: argparse.Namespace) -> int:
    from .docker_image import ImageBuildError, ImageRequest, cache_dir_from_env, ensure_image
    from .workspace import RuntimeUnavailableError

    request = ImageRequest(args.image, args.cache_dir or cache_dir_from_env())
    try:
        done = ensure_image(request, log=_log)
    except (ImageBuildError, RuntimeUnavailableError) as error:
        raise CommandFailed(str(error)) from None
    print(done)
    return EXIT_OK


COMMANDS: tuple[Command, ...] = (
    Command(
        "validate", "check SKILL.md files against the rules", _configure_validate, _run_validate
    ),
    Command("rules", "list every validation rule", _configure_rules, _run_rules),
    Command("rule", "show the documentation of one rule", _configure_rule, _run_rule),
    Command(
        "docker-image",
        "build the offline Docker test image of the docker runtime (Debian 12 minbase with"
        " python3; debootstrap, as root, once)",
        _configure_docker_image,
        _run_docker_image,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-skills", description="Tools for Agent Skills.")
    parser.add_argument("--version", action="version", version=f"agent-skills {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(run=command.run, parser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
