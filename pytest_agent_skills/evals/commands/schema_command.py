"""``agent-skills schema [NAME]``: the JSON Schemas the package ships, listed, or one
printed (the documents evals write name theirs in ``$schema``; evals.json, triggers.json and
scenarios are read against theirs)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from ...errors import AgentSkillsError


class UnknownSchemaError(AgentSkillsError):
    """A schema name the package ships none of."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", metavar="NAME", nargs="?", help="a schema's name, e.g. benchmark; none: list them"
    )
    parser.add_argument(
        "--upgrade",
        metavar="FOLDER",
        help="give every document under FOLDER written before $schema was (output folders,"
        " cassettes) its $schema, after checking it; nothing else changes",
    )


def run(args: argparse.Namespace) -> int:
    from ..documents.catalog import published

    if args.upgrade is not None:
        from ..documents.upgrade import upgrade

        upgraded = upgrade(Path(args.upgrade))
        for path in upgraded:
            print(f"upgraded {path}")
        print(f"{len(upgraded)} document(s) upgraded under {args.upgrade}")
        return 0
    schemas = published()
    if args.name is None:
        width = max(len(name) for name in schemas)
        for name, (_, summary) in schemas.items():
            print(f"{name:<{width}}  {summary}")
        print(f"{len(schemas)} schemas; 'agent-skills schema NAME' prints one")
        return 0
    found = schemas.get(args.name.removesuffix(".schema.json"))
    if found is None:
        close = difflib.get_close_matches(args.name, schemas, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownSchemaError(
            f"unknown schema {args.name!r}; {hint}'agent-skills schema' lists every schema"
        )
    sys.stdout.write(found[0].read_text(encoding="utf-8"))
    return 0
