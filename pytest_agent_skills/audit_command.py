"""``agent-skills audit [PATH...]``: the skills ``validate`` would check, audited for
malicious and dangerous content (:mod:`pytest_agent_skills.audit`).  Exit status: 1 when a
finding reaches ``--fail-on`` (default high), 0 otherwise, 2 for usage errors."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .config.command_line import UsageError, add_paths_argument, check_output, write_report
from .targets import changed_targets, repository_root, targets

#: The plugin setting each flag sets (ini name -> the flag), the flags made from the
#: settings' own declarations.
AUDIT_FLAGS = {
    "skills_audit_fail_on": "--fail-on",
    "skills_audit_select": "--select",
    "skills_audit_ignore": "--ignore",
    "skills_audit_suppress": "--suppress",
    "skills_audit_dynamic": "--dynamic",
    "skills_changed_since": "--changed-since",
}


def configure(parser: argparse.ArgumentParser) -> None:
    from .config import audit, roots  # noqa: F401 - declare the settings of the flags
    from .settings import REGISTRY, add_command_flag

    add_paths_argument(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="output format: text, json (the audit document, schemas/audit.schema.json), sarif"
        " (code scanning), github (workflow annotations)",
    )
    for ini, flag in AUDIT_FLAGS.items():
        add_command_flag(parser, REGISTRY[ini], flag)
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
    from .audit.seam import DynamicOptions, DynamicUnavailableError, start_dynamic
    from .config.audit import audit_options
    from .config.scopes import Scopes
    from .listings import FolderListings

    check_output(args.output)
    listings = FolderListings()
    flags: dict[str, Any] = {
        ini: getattr(args, flag[2:].replace("-", "_")) for ini, flag in AUDIT_FLAGS.items()
    }
    scopes = Scopes(flags, listings=listings, flag_names=AUDIT_FLAGS)
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
