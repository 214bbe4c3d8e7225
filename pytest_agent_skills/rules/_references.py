"""Rules about files the body refers to: Markdown links and bare paths such as
``scripts/x.py``, resolved from the skill root as the spec says."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
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


def references(text: str, top_folders: Callable[[], frozenset[str]]) -> Iterator[tuple[int, str]]:
    """(0-based line index, relative path) of every file reference in ``text``.

    ``top_folders`` is called (once, lazily) only when a bare path starts with a folder
    that is not one of the spec's standard ones.
    """
    text = text.replace(BASE_DIR_PLACEHOLDER + "/", "")
    folders: frozenset[str] | None = None
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
            if path in seen:
                continue
            first = path.split("/", 1)[0]
            if first not in STANDARD_FOLDERS:
                if folders is None:
                    folders = top_folders()
                if first not in folders:
                    continue
            seen.add(path)
            yield index, path


def _top_folders(directory: str) -> frozenset[str]:
    try:
        with os.scandir(directory) as entries:
            return frozenset(entry.name for entry in entries if entry.is_dir())
    except OSError:
        return frozenset()


def _no_folders() -> frozenset[str]:
    return frozenset()


def _inside(path: str, root: str) -> bool:
    return path.startswith(root + os.sep)


# Plain os.path strings here: this rule runs once per skill and pathlib's overhead dominated it.
def check_references(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    # abspath, not realpath: '..' in the text is what leaves the folder, and it saves syscalls.
    root = os.path.abspath(skill.directory)
    docs: dict[str, tuple[str, int, str]] = {}
    for index, target in references(skill.body, lambda: _top_folders(root)):
        line = skill.body_line + index
        resolved = os.path.normpath(os.path.join(root, target))
        if not _inside(resolved, root):
            yield Hit(
                "reference-outside",
                line,
                f"the body refers to {target!r}, outside the skill folder; only the skill folder"
                " is staged for the agent. Copy the file into the skill and refer to it"
                " relatively.",
            )
            continue
        if resolved in docs:
            continue
        # Markdown targets are opened right away (their links matter to reference-nested):
        # one system call answers both "does it exist" and "what does it say".
        content = _read_markdown(resolved) if resolved.lower().endswith(".md") else None
        if content is None and not os.path.exists(resolved):
            yield Hit(
                "reference-missing",
                line,
                f"the body refers to {target!r}, which does not exist in the skill folder. Add the"
                " file, or fix the path (paths are relative to the folder holding SKILL.md).",
            )
        elif content is not None:
            docs[resolved] = (target, line, content)
    for doc, (target, line, content) in docs.items():
        yield from _nested(doc, root, target, line, content, set(docs))


def _read_markdown(path: str) -> str | None:
    """The text of a Markdown file ("" when it has no links), None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:  # missing, a folder, unreadable: the caller checks existence
        return None
    return data.decode("utf-8", errors="replace") if b"](" in data else ""


def _nested(
    doc: str, root: str, target: str, line: int, text: str, direct: set[str]
) -> Iterator[Hit]:
    """One warning when ``doc`` links a further doc that SKILL.md does not link itself."""
    if "](" not in text:
        return
    for _index, inner in references(text, _no_folders):
        candidate = os.path.normpath(os.path.join(os.path.dirname(doc), inner))
        if (
            candidate.lower().endswith(".md")
            and candidate not in direct
            and _inside(candidate, root)
            and os.path.isfile(candidate)
        ):
            relative = os.path.relpath(candidate, root).replace(os.sep, "/")
            yield Hit(
                "reference-nested",
                line,
                f"{target!r} refers on to {relative!r}, which SKILL.md does not link; keep"
                " references one level deep: link it from SKILL.md too.",
            )
            return
