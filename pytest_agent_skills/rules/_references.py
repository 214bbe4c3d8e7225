"""Rules about files the body refers to: Markdown links and bare paths such as
``scripts/x.py``, resolved from the skill root as the spec says."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from ..skill import BASE_DIR_PLACEHOLDER, Skill
from ._base import Hit
from ._options import ValidationOptions

#: Folders the spec names; bare paths under them (or under any folder the skill has) are references.
STANDARD_FOLDERS = ("scripts", "references", "assets")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")
_BARE_PATH = re.compile(r"(?<![\w./$~-])((?:[\w-]+/)+[\w.-]*\w\.[A-Za-z0-9]+)(?![\w/])")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: What a relative file path looks like; excludes link-like text such as SMILES '[C:1](=[O:2])'.
_PATH_LIKE = re.compile(r"(?:\.{1,2}/)*[\w~][\w.~ /-]*")


def _link_target(raw: str) -> str | None:
    """The relative path a Markdown link points to, or None for URLs, anchors and absolutes."""
    if _SCHEME.match(raw) or raw.startswith(("#", "/", "\\")):
        return None
    target = unquote(raw.split("#", 1)[0].split("?", 1)[0])
    return target if _PATH_LIKE.fullmatch(target) else None


def references(text: str, top_folders: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(0-based line index, relative path) of every file reference in ``text``."""
    text = text.replace(BASE_DIR_PLACEHOLDER + "/", "")
    for index, line in enumerate(text.split("\n")):
        if "/" not in line and "](" not in line:
            continue
        seen: set[str] = set()
        for match in _LINK.finditer(line):
            target = _link_target(match.group(1))
            if target is not None and target not in seen:
                seen.add(target)
                yield index, target
        for match in _BARE_PATH.finditer(line):
            path = match.group(1)
            if path.split("/", 1)[0] in top_folders and path not in seen:
                seen.add(path)
                yield index, path


def _top_folders(directory: Path) -> frozenset[str]:
    try:
        entries = {entry.name for entry in os.scandir(directory) if entry.is_dir()}
    except OSError:
        entries = set()
    return frozenset(STANDARD_FOLDERS) | entries


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def check_references(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    root = skill.directory.resolve()
    folders = _top_folders(root)
    docs: dict[Path, tuple[str, int]] = {}
    for index, target in references(skill.body, folders):
        line = skill.body_line + index
        resolved = Path(os.path.normpath(root / target))
        if not _inside(resolved, root):
            yield Hit(
                "reference-outside",
                line,
                f"the body refers to {target!r}, outside the skill folder; only the skill folder"
                " is staged for the agent. Copy the file into the skill and refer to it"
                " relatively.",
            )
        elif not resolved.exists():
            yield Hit(
                "reference-missing",
                line,
                f"the body refers to {target!r}, which does not exist in the skill folder. Add the"
                " file, or fix the path (paths are relative to the folder holding SKILL.md).",
            )
        elif resolved.suffix.lower() == ".md" and resolved.is_file():
            docs.setdefault(resolved, (target, line))
    for doc, (target, line) in docs.items():
        yield from _nested(doc, root, target, line, folders, set(docs))


def _nested(
    doc: Path, root: Path, target: str, line: int, folders: frozenset[str], direct: set[Path]
) -> Iterator[Hit]:
    """One warning when ``doc`` links a further doc that SKILL.md does not link itself."""
    try:
        text = doc.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for _index, inner in _links_only(text):
        candidate = Path(os.path.normpath(doc.parent / inner))
        if (
            candidate.suffix.lower() == ".md"
            and candidate not in direct
            and _inside(candidate, root)
            and candidate.is_file()
        ):
            yield Hit(
                "reference-nested",
                line,
                f"{target!r} refers on to {candidate.relative_to(root).as_posix()!r},"
                " which SKILL.md does not link; keep references one level deep: link it from"
                " SKILL.md too.",
            )
            return


def _links_only(text: str) -> Iterator[tuple[int, str]]:
    return references(text, frozenset())
