"""Rules about files the body refers to: Markdown links, reference definitions and bare
paths such as ``scripts/x.py``, resolved from the skill root as the spec says.

What counts as a reference is what a CommonMark parser reads (see
:mod:`pytest_agent_skills.bodyscan`): not link syntax shown in code, not a Markdown
example in a ```` ```markdown ```` block, not an HTML comment.  The parser only runs
for a body when a string scan finds something to report that the parser might read
differently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..bodyscan import MarkdownText, Reference, one_per_line
from ..files import FileReadError, NotRegularFileError, OutsideFolderError, read_skill_file
from ..skill import SKILL_FILE, Skill
from ._base import Hit
from ._options import ValidationOptions

#: Folders the spec names; bare paths under them (or under any folder the skill has) are references.
STANDARD_FOLDERS = frozenset({"scripts", "references", "assets"})
_FOLDER_NAME = re.compile(r"[\w-]+")
_NO_FOLDERS: frozenset[str] = frozenset()


def _folders(root: str) -> frozenset[str]:
    """The spec's folders and the skill's own top-level folders: first parts of bare paths."""
    try:
        with os.scandir(root) as entries:
            own = {entry.name for entry in entries if entry.is_dir()}
    except OSError:
        return STANDARD_FOLDERS
    return STANDARD_FOLDERS | {name for name in own if _FOLDER_NAME.fullmatch(name)}


def _inside(path: str, root: str) -> bool:
    return path.startswith(root + os.sep)


@dataclass(frozen=True)
class _Target:
    """Where a reference leads: ``outside`` the skill, ``missing``, a Markdown file ``refused``
    (a link out of the skill, a named pipe, too large), or there (with the text of a Markdown
    file, "" when it links nothing)."""

    path: str
    outside: bool = False
    missing: bool = False
    content: str | None = None
    refused: FileReadError | None = None


class _Files:
    """The skill's files as the references find them, each looked up once."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._targets: dict[tuple[str, str], _Target] = {}

    def target(self, base: str, relative: str) -> _Target:
        key = (base, relative)
        found = self._targets.get(key)
        if found is None:
            found = self._targets[key] = self._look_up(_joined(base, relative))
        return found

    def _look_up(self, path: str) -> _Target:
        if not _inside(path, self.root):
            return _Target(path, outside=True)
        # Markdown targets are read right away (their links matter to reference-nested):
        # the read answers both "does it exist" and "what does it say".
        try:
            content = _read_markdown(self.root, path) if path.lower().endswith(".md") else None
        except FileReadError as error:
            return _Target(path, refused=error)
        if content is None and not os.path.exists(path):
            return _Target(path, missing=True)
        return _Target(path, content=content)


def _joined(base: str, relative: str) -> str:
    """``normpath(join(base, relative))`` (abspath, not realpath: '..' in the text is what
    leaves the folder, and it saves system calls); plain relative paths skip normpath."""
    plain = "/." not in "/" + relative and "//" not in relative and not relative.endswith("/")
    if os.sep == "/" and plain and relative:
        return f"{base}/{relative}"
    return os.path.normpath(os.path.join(base, relative))


def _read_markdown(root: str, path: str) -> str | None:
    """The text of the Markdown file ``path`` under ``root`` ("" when it links nothing), None
    when it is missing or a folder (the caller checks existence); a :class:`FileReadError`
    when it is not read (see :func:`~pytest_agent_skills.files.read_skill_file`)."""
    try:
        data = read_skill_file(root, path[len(root) + 1 :])
    except FileNotFoundError:
        return None
    except NotRegularFileError as error:
        if error.kind == "a folder":
            return None
        raise
    linked = b"](" in data or b"]:" in data
    return data.decode("utf-8", errors="replace") if linked else ""


def _read(
    text: MarkdownText,
    folders: frozenset[str],
    files: _Files,
    base: str,
    reported: Callable[[_Target], bool],
) -> list[tuple[Reference, _Target]]:
    """The references of ``text`` with their targets: the string scan's, or the parser's when
    the scan has a ``reported`` target that only the parser can confirm."""
    found: list[Reference] = []
    needed: list[Reference] = []
    for reference in text.references(folders):
        target = files.target(base, reference.target)
        verdict = text.verdict(reference) if reported(target) else True
        if verdict is None:
            needed.append(reference)
        elif verdict:
            found.append(reference)
    if needed:
        found = text.exact_references(folders, needed)
    return [(ref, files.target(base, ref.target)) for ref in one_per_line(found)]


#: File names that stand for any file in prose ("each script has help: `python
#: scripts/script_name.py --help`"): not a reference to a file of that name.
_PLACEHOLDER = re.compile(
    r"(?:script|file|tool|skill|module|your)[_-]?name|your[_-][\w-]+|x{3,}|placeholder", re.I
)


def _placeholder(reference: Reference) -> bool:
    if reference.kind != "path":
        return False
    stem = reference.target.rsplit("/", 1)[-1].split(".", 1)[0]
    return _PLACEHOLDER.fullmatch(stem) is not None


def _problem(target: _Target) -> bool:
    return target.outside or target.missing or target.refused is not None


# Plain os.path strings here: this rule runs once per skill and pathlib's overhead dominated it.
def check_references(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    root = os.path.abspath(skill.directory)
    files = _Files(root)
    docs: dict[str, tuple[str, int, str]] = {}
    # Every doc the body names, even in passing: a doc SKILL.md links is one level deep.
    direct: set[str] = set()
    for reference, target in _read(skill.markdown, _folders(root), files, root, _problem):
        direct.add(target.path)
        if target.outside:
            yield Hit(
                "reference-outside",
                reference.line,
                f"the body refers to {reference.target!r}, outside the skill folder; only the"
                " skill folder is staged for the agent. Copy the file into the skill and refer"
                " to it relatively.",
            )
        elif isinstance(target.refused, OutsideFolderError):
            yield Hit(
                "reference-outside",
                reference.line,
                f"the body refers to {reference.target!r}, a symbolic link to a file outside the"
                " skill folder; it is not followed (only the skill folder is staged for the"
                " agent). Replace the link with a copy of the file.",
            )
        elif target.refused is not None:
            message = f"the body refers to {reference.target!r}, which {target.refused.reason}"
            yield Hit("reference-unreadable", reference.line, message)
        elif target.missing and not _placeholder(reference):
            yield Hit(
                "reference-missing",
                reference.line,
                f"the body refers to {reference.target!r}, which does not exist in the skill"
                " folder. Add the file, or fix the path (paths are relative to the folder"
                " holding SKILL.md).",
            )
        elif target.content and target.path not in docs:
            docs[target.path] = (reference.target, reference.line, target.content)
    skill_file = os.path.join(root, SKILL_FILE)
    for doc, (name, line, content) in docs.items():
        further = _further_doc(doc, content, files, direct | {skill_file, doc})
        if further is not None:
            relative = os.path.relpath(further, root).replace(os.sep, "/")
            yield Hit(
                "reference-nested",
                line,
                f"{name!r} refers on to {relative!r}, which SKILL.md does not link; keep"
                " references one level deep: link it from SKILL.md too.",
            )


def _further_doc(doc: str, content: str, files: _Files, known: set[str]) -> str | None:
    """The first Markdown file of the skill that ``doc`` links and ``known`` does not hold."""

    def further(target: _Target) -> bool:
        return target.content is not None and target.path not in known

    found = _read(MarkdownText(content), _NO_FOLDERS, files, os.path.dirname(doc), further)
    return next((target.path for _reference, target in found if further(target)), None)
