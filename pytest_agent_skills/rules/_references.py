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
from ..files import (
    FileReadError,
    NotRegularFileError,
    OutsideFolderError,
    check_skill_file,
    read_skill_file,
)
from ..listings import FolderListings, Kind
from ..skill import SKILL_FILE, Skill
from ._base import Hit
from ._options import ValidationOptions

#: Folders the spec names; bare paths under them (or under any folder the skill has) are references.
STANDARD_FOLDERS = frozenset({"scripts", "references", "assets"})
_FOLDER_NAME = re.compile(r"[\w-]+")
_NO_FOLDERS: frozenset[str] = frozenset()


def _folders(root: str, listings: FolderListings) -> frozenset[str]:
    """The spec's folders and the skill's own top-level folders: first parts of bare paths."""
    entries = listings.entries(root)
    if entries is None:
        return STANDARD_FOLDERS
    try:
        own = {name for name, entry in entries.items() if entry.is_dir()}
    except OSError:
        return STANDARD_FOLDERS
    return STANDARD_FOLDERS | {name for name in own if _FOLDER_NAME.fullmatch(name)}


def _inside(path: str, root: str) -> bool:
    return path.startswith(root + os.sep)


@dataclass(frozen=True)
class _Target:
    """Where a reference leads: ``outside`` the skill, ``missing``, a Markdown file ``refused``
    (a link out of the skill, a named pipe, too large), or there; ``markdown`` when it is a
    Markdown file that would be read (its links matter to reference-nested)."""

    path: str
    outside: bool = False
    missing: bool = False
    markdown: bool = False
    refused: FileReadError | None = None


class _Files:
    """The skill's files as the references find them, each looked up once: in the folder
    listings when they settle it (no system call; a Markdown file is checked from its
    ``lstat``, not read), else through the careful reader.  A doc is read only when its
    links can matter (see :meth:`all_markdown_known`)."""

    def __init__(self, root: str, listings: FolderListings) -> None:
        self.root = root
        self.listings = listings
        self._targets: dict[tuple[str, str], _Target] = {}
        self._contents: dict[str, str] = {}

    def target(self, base: str, relative: str) -> _Target:
        key = (base, relative)
        found = self._targets.get(key)
        if found is None:
            found = self._targets[key] = self._look_up(_joined(base, relative))
        return found

    def _look_up(self, path: str) -> _Target:
        if not _inside(path, self.root):
            return _Target(path, outside=True)
        markdown = path.lower().endswith(".md")
        kind, entry = self.listings.find(self.root, path[len(self.root) + 1 :])
        if kind is Kind.FOLDER or (kind is Kind.FILE and not markdown):
            return _Target(path)
        if kind is Kind.FILE:
            assert entry is not None
            try:
                check_skill_file(path, entry.stat(follow_symlinks=False))
            except FileReadError as error:
                return _Target(path, refused=error)
            except OSError:
                pass  # gone since it was listed: the reader below says what it is now
            else:
                return _Target(path, markdown=True)
        # Not settled by the listings (a link, a pipe, absent): the careful reader decides.
        try:
            content = _read_markdown(self.root, path) if markdown else None
        except FileReadError as error:
            return _Target(path, refused=error)
        if content is not None:
            self._contents[path] = content
            return _Target(path, markdown=True)
        return _Target(path) if os.path.exists(path) else _Target(path, missing=True)

    def content(self, path: str) -> str:
        """The text of the Markdown file ``path`` ("" when it links nothing or is no longer
        readable)."""
        if path not in self._contents:
            try:
                self._contents[path] = _read_markdown(self.root, path) or ""
            except FileReadError:
                self._contents[path] = ""
        return self._contents[path]

    def all_markdown_known(self, known: set[str]) -> bool:
        """Whether every Markdown file of the skill is in ``known`` (paths): then no doc can
        link one that is not, and no doc needs reading.  False when the listings cannot
        tell (a folder not listed, a link to a folder: more paths lead to the same file)."""
        tree = self.listings.tree(self.root)
        if tree is None or tree[1]:
            return False
        root = self.root
        return all(
            f"{root}/{relative}" in known
            for relative in tree[0]
            if relative.lower().endswith(".md")
        )


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
    files = _Files(root, skill.listings)
    docs: dict[str, tuple[str, int]] = {}
    # Every doc the body names, even in passing: a doc SKILL.md links is one level deep.
    direct: set[str] = set()
    folders = _folders(root, skill.listings)
    for reference, target in _read(skill.markdown, folders, files, root, _problem):
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
        elif target.markdown and target.path not in docs:
            docs[target.path] = (reference.target, reference.line)
    known = direct | {os.path.join(root, SKILL_FILE)}
    if not docs or files.all_markdown_known(known):
        return  # no doc can link a Markdown file SKILL.md does not: none is read
    for doc, (name, line) in docs.items():
        content = files.content(doc)
        further = _further_doc(doc, content, files, known | {doc}) if content else None
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
        return target.markdown and target.path not in known

    found = _read(MarkdownText(content), _NO_FOLDERS, files, os.path.dirname(doc), further)
    return next((target.path for _reference, target in found if further(target)), None)
