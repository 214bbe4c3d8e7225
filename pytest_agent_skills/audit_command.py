"""``agent-skills audit [PATH...]``: the skills ``validate`` would check, audited for
malicious and dangerous content (:mod:`pytest_agent_skills.audit`).  Exit status: 1 when a
finding reaches ``--fail-on`` (default high), 0 otherwise, 2 for usage errors."""

from __future__ import annotations

import argparse
from pathlib import Path

from .config.command_line import UsageError, add_paths_argument, check_output, write_report
from .targets import changed_targets, repository_root, targets


def configure(parser: argparse.ArgumentParser) -> None:
    from .config.file_settings import add_command_flags

    add_paths_argument(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="output format: text, json (the audit document, schemas/audit.schema.json), sarif"
        " (code scanning), github (workflow annotations)",
    )
    # The flags of the settings audit takes (--fail-on, --select, ..., --changed-since).
    add_command_flags(parser, "audit")
    parser.add_argument(
        "--runtime",
        choices=("sandbox", "docker"),
        help="the isolated runtime of --dynamic (default: the sandbox, else Docker; never the"
        " host)",
    )
    parser.add_argument(
        "--cassettes",
        type=Path,
        metavar="DIR",
        help="with --dynamic: detonate the skill_run commands of the recorded conversations"
        " in DIR too",
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report to a file, not stdout")


def run(args: argparse.Namespace) -> int:
    from .audit.formats import FORMATTERS
    from .audit.run import audit_folders, skill_folders
    from .audit.seam import DynamicOptions, DynamicUnavailableError
    from .config.audit import audit_options
    from .config.file_settings import command_flag_names, command_flag_values
    from .config.scopes import Scopes
    from .listings import FolderListings

    check_output(args.output)
    listings = FolderListings()
    flags = command_flag_values(args, "audit")
    scopes = Scopes(flags, listings=listings, flag_names=command_flag_names("audit"))
    found = targets(args.paths, scopes, [])
    ref = scopes.for_path(".").settings("skills_changed_since")
    if ref:
        found = changed_targets(found, ref, listings)
    options = {path: audit_options(scope.settings) for path, scope in found.items()}
    folders = skill_folders(found, options.__getitem__, listings)
    if not folders and not ref:
        specs = args.paths or ["."]
        raise UsageError(
            f"no skill found under {', '.join(specs)} (a skill is a folder holding SKILL.md)"
        )
    here = audit_options(scopes.for_path(".").settings)
    if (args.runtime or args.cassettes) and not here.dynamic:
        raise UsageError(
            "--runtime and --cassettes are options of the detonation run: add --dynamic"
        )
    analysis = None
    if here.dynamic:
        from .audit.detonation import start_dynamic

        try:
            analysis = start_dynamic(DynamicOptions(args.runtime, args.cassettes))
        except DynamicUnavailableError as error:
            raise UsageError(str(error)) from None
    try:
        audit = audit_folders(folders, analysis)
    finally:
        if analysis is not None:
            analysis.close()
    text = FORMATTERS[args.format](audit, repository_root(scopes))
    write_report(args.output, text)
    return 1 if audit.failed else 0
