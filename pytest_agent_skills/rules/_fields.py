"""Front-matter field rules: the field set, name, description, license, compatibility,
metadata and allowed-tools (the Agent Skills specification)."""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from ..docpath import kind_of
from ..skill import FrontMatter, Skill
from ._base import Hit
from ._options import CLAUDE_CODE_FIELDS, ValidationOptions

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
RESERVED_WORDS = ("anthropic", "claude")
_NAME_CHARS = re.compile(r"[a-z0-9-]+")
_XML_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(\s[^<>]*)?/?>")


def _kind(value: Any) -> str:
    """What a front matter value is, in a YAML document's words (``an empty value``)."""
    return kind_of(value, yaml=True)


def check_fields(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    front = skill.front_matter
    if front is None:
        return
    profile = options.profile
    for key in front.values:
        if key in profile.fields:
            continue
        if key in CLAUDE_CODE_FIELDS:
            fix = (
                "it is a Claude Code extension field: validate with the claude-code profile"
                " (--skills-profile claude-code) or remove it"
            )
        else:
            fix = f"move it under 'metadata:' (e.g. metadata: {{{key}: \"...\"}}) or remove it"
        yield Hit(
            "field-unknown",
            front.line_of(key),
            f"unknown top-level field {key!r}: the {profile.name} profile allows only"
            f" {', '.join(sorted(profile.fields))}; {fix}.",
        )
    if "license" in front.values:
        yield from _license(front.values["license"], front.line_of("license"))
    if "compatibility" in front.values:
        yield from _compatibility(front.values["compatibility"], front.line_of("compatibility"))
    if "metadata" in front.values:
        yield from _metadata(front.values["metadata"], front.line_of("metadata"))
    if "allowed-tools" in front.values:
        tools = front.values["allowed-tools"]
        yield from _allowed_tools(tools, front.line_of("allowed-tools"), profile.allowed_tools_list)


def _license(value: Any, line: int) -> Iterator[Hit]:
    if not isinstance(value, str) or not value.strip():
        yield Hit(
            "license-type",
            line,
            f"'license' must be a licence name or the name of a bundled licence file, found"
            f" {_kind(value)}. Write e.g. 'license: Apache-2.0' or remove the field.",
        )


def _compatibility(value: Any, line: int) -> Iterator[Hit]:
    if not isinstance(value, str):
        yield Hit(
            "compatibility-type",
            line,
            f"'compatibility' must be a string, found {_kind(value)}. Write the environment"
            ' needs as one sentence, e.g. compatibility: "Needs Python 3.11 and network access".',
        )
    elif not value.strip() or len(value) > MAX_COMPATIBILITY:
        found = "an empty string" if not value.strip() else f"{len(value)} characters"
        yield Hit(
            "compatibility-length",
            line,
            f"'compatibility' must be 1-{MAX_COMPATIBILITY} characters, found {found}."
            " Shorten it, or remove the field (most skills do not need it).",
        )


def _metadata(value: Any, line: int) -> Iterator[Hit]:
    if not isinstance(value, dict):
        yield Hit(
            "metadata-type",
            line,
            f"'metadata' must be a map of string keys to string values, found {_kind(value)}."
            " Write it as indented 'key: \"value\"' lines under 'metadata:'.",
        )
        return
    for key, item in value.items():
        if not isinstance(key, str):
            yield Hit(
                "metadata-type",
                line,
                f'metadata key {key!r} is {_kind(key)}, not a string. Quote it: "{key}": ...',
            )
        if isinstance(item, (dict, list)):
            yield Hit(
                "metadata-type",
                line,
                f"metadata[{str(key)!r}] is {_kind(item)}; metadata values must be strings"
                " (clients stringify nested values to Python text). Flatten it into"
                " separate string keys or write it as one quoted string.",
            )
        elif not isinstance(item, str):
            yield Hit(
                "metadata-value-scalar",
                line,
                f"metadata[{str(key)!r}] is {_kind(item)}, not a string; clients that stringify"
                f' it may show a different text (1.50 becomes 1.5). Quote it: {key}: "{item}".',
            )


def _allowed_tools(value: Any, line: int, list_allowed: bool) -> Iterator[Hit]:
    if isinstance(value, str):
        return
    if list_allowed and isinstance(value, list) and all(isinstance(item, str) for item in value):
        return
    yield Hit(
        "allowed-tools-type",
        line,
        f"'allowed-tools' must be one space-separated string, found {_kind(value)}."
        " Write it as e.g. 'allowed-tools: Bash(git:*) Read'"
        + (" (or use the claude-code profile, which accepts a list)." if not list_allowed else "."),
    )


def _required_text(front: FrontMatter, key: str, hint: str) -> Generator[Hit, None, str | None]:
    """Hits for an absent, non-text or blank required field; returns the text when usable."""
    value = front.values.get(key)
    if value is None:
        message = f"the front matter has no '{key}'. Add {hint}."
        yield Hit(f"{key}-missing", front.open_line, message)
        return None
    line = front.line_of(key)
    if not isinstance(value, str):
        yield Hit(
            f"{key}-type",
            line,
            f"'{key}' must be a string, found {_kind(value)}. Write {hint}, quoted if YAML reads"
            " it as something else.",
        )
        return None
    if not value.strip():
        yield Hit(f"{key}-missing", line, f"'{key}' is empty. Write {hint}.")
        return None
    return value


def check_name(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    front = skill.front_matter
    if front is None:
        return
    declared = front.values.get("name")
    folder = directory_name(skill.directory, declared if isinstance(declared, str) else None)
    name = yield from _required_text(front, "name", f"'name: {folder}' (the folder name)")
    if name is None:
        return
    line = front.line_of("name")
    yield from _name_format(name, line)
    if name != folder:
        yield Hit(
            "name-directory",
            line,
            f"name {name!r} must equal the skill's folder name {folder!r}. Rename the folder"
            f" or set 'name: {folder}'.",
        )
    lowered = name.lower()
    for word in RESERVED_WORDS:
        if word in lowered:
            yield Hit(
                "name-reserved-word",
                line,
                f"name {name!r} contains the reserved word {word!r}, which Anthropic's platform"
                " rejects on upload. Choose a name without it.",
            )


def directory_name(directory: Path, expected: str | None = None) -> str:
    """The folder's name as given, or its real name when that is what ``expected`` matches.

    A path ending in '.' or '..' is always resolved (skills-ref compares against
    ``Path('.').name == ''`` when run as ``validate .``); a symlinked folder passes
    under either name. The common case costs no system call.
    """
    name = directory.name
    if name not in ("", ".", "..") and (expected is None or name == expected):
        return name
    real = os.path.basename(os.path.realpath(directory))
    return real if expected is None or real == expected or name in ("", ".", "..") else name


def _name_format(name: str, line: int) -> Iterator[Hit]:
    if len(name) > MAX_NAME:
        yield Hit(
            "name-length",
            line,
            f"name is {len(name)} characters long; the limit is {MAX_NAME}. Shorten it (and the"
            " folder name with it).",
        )
    if not _NAME_CHARS.fullmatch(name):
        bad = "".join(dict.fromkeys(char for char in name if not _NAME_CHARS.fullmatch(char)))
        suggestion = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", name.lower())).strip("-")
        yield Hit(
            "name-charset",
            line,
            f"name {name!r} may only contain lowercase letters a-z, digits 0-9 and hyphens;"
            f" found {bad!r}. Use e.g. {suggestion or 'my-skill'!r}.",
        )
    if name.startswith("-") or name.endswith("-") or "--" in name:
        yield Hit(
            "name-hyphens",
            line,
            f"name {name!r} must not start or end with '-' nor contain '--'."
            f" Use {re.sub(r'-{2,}', '-', name).strip('-') or 'my-skill'!r}.",
        )


def check_description(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    front = skill.front_matter
    if front is None:
        return
    hint = "'description: ...' saying what the skill does and when to use it"
    description = yield from _required_text(front, "description", hint)
    if description is None:
        return
    line = front.line_of("description")
    if len(description) > MAX_DESCRIPTION:
        yield Hit(
            "description-length",
            line,
            f"description is {len(description)} characters long; the limit is"
            f" {MAX_DESCRIPTION}. Move details into the body or a doc file.",
        )
    tag = _XML_TAG.search(description)
    if tag:
        yield Hit(
            "description-xml",
            line,
            f"description contains the XML tag {tag.group(0)!r}; Anthropic's platform rejects"
            " XML tags in descriptions. Reword it without angle-bracket tags.",
        )
