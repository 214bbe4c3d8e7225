"""Rules about files the body refers to: Markdown links, reference definitions and bare
paths such as ``scripts/x.py``, resolved from the skill root as the spec says.

What counts as a reference is what a CommonMark parser reads (see
:mod:`pytest_agent_skills.bodyscan`): not link syntax shown in code, not a Markdown
example in a ```` ```markdown ```` block, not an HTML comment.  The parser only runs
for a body when a string scan finds something to report that the parser might read
differently.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..bodyparse import Reference
from ..bodyscan import MarkdownText, one_per_line
from ..filenames import SKILL_FILE
from ..files import (
    FileReadError,
    NotRegularFileError,
    OutsideFolderError,
    check_skill_file,
    read_skill_file,
    resolve_inside,
)
from ..links import RealPaths
from ..listings import FolderListings, Kind
from ..skill import Skill
from ._base import Hit
from ._illustrations import is_illustration
from ._options import ValidationOptions

#: Folders the spec names; bare paths under them (or under any folder the skill has) are references.
STANDARD_FOLDERS = frozenset({"scripts", "references", "assets"})
_FOLDER_NAME = re.compile(r"[\w-]+")
_NO_FOLDERS: frozenset[str] = frozenset()
#: ']' then '(' or ':': a doc without it links nothing. (One search of the text, rather than
#: an ``in`` test for each of the two pairs.)
_LINK_SYNTAX = re.compile(rb"\][(:]")


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


class _Target(NamedTuple):
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
        self._inside = root + os.sep
        self._targets: dict[tuple[str, str], _Target] = {}
        self._contents: dict[str, str] = {}
        self._real_path = RealPaths()

    def target(self, base: str, relative: str) -> _Target:
        key = (base, relative)
        found = self._targets.get(key)
        if found is None:
            found = self._targets[key] = self._look_up(_joined(base, relative))
        return found

    def _look_up(self, path: str) -> _Target:
        if not path.startswith(self._inside):
            return _Target(path, outside=True)
        markdown = path[-3:].lower() == ".md"
        kind, entry = self.listings.find(self.root, path[len(self._inside) :])
        if kind is Kind.FOLDER or (kind is Kind.FILE and not markdown):
            return _Target(path)
        if kind is Kind.FILE:
            assert entry is not None
            user = self.listings.user_ids()  # (see check_skill_file)
            try:
                check_skill_file(path, entry.stat(follow_symlinks=False), user)
            except FileReadError as error:
                return _Target(path, refused=error)
            except OSError:
                pass  # gone since it was listed: the reader below says what it is now
            else:
                return _Target(path, markdown=True)
        elif kind is Kind.ABSENT:
            try:
                os.lstat(path)  # one system call confirms what the listing says
            except (FileNotFoundError, NotADirectoryError):
                return _Target(path, missing=True)
            except OSError:
                pass  # e.g. not allowed to look: the reader below words it
        # Not settled by the listings (a link, a pipe, a name a case-insensitive file system
        # matches): the careful reader decides; a link out of the skill is never followed.
        content = None
        try:
            if markdown:
                content = _read_markdown(self.root, path)
            else:
                resolve_inside(self.root, path)
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

    def is_known(self, path: str, known: set[str]) -> bool:
        """Whether ``path`` is in ``known`` or, in a skill with a linked folder (where more
        paths lead to one file: ``docs -> shared/docs``), is the same file as one of them."""
        if path in known:
            return True
        tree = self.listings.tree(self.root)
        if tree is not None and not tree[1]:
            return False
        real = self._real_path(path)
        return any(self._real_path(other) == real for other in known)

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
    if (
        os.sep == "/"
        and relative
        and relative[0] != "."
        and "/." not in relative
        and "//" not in relative
        and relative[-1] != "/"
    ):
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
    linked = _LINK_SYNTAX.search(data) is not None
    return data.decode("utf-8", errors="replace") if linked else ""


class _Reading(NamedTuple):
    """The references of a text, by what their targets are."""

    #: References to a reported target, one per line and target, in text order.
    reported: list[tuple[Reference, _Target]]
    #: Every other target by path, with its first reference (line 0: not counted yet).
    named: dict[str, tuple[Reference, _Target]]


def _read(
    text: MarkdownText,
    folders: frozenset[str],
    files: _Files,
    base: str,
    reported: Callable[[_Target], bool],
) -> _Reading:
    """The references of ``text`` and their targets: the string scan's, or the parser's when
    the scan has a ``reported`` target that only the parser can confirm.  Each target is
    looked up once, and only references to a reported one are numbered and checked."""
    by_target: dict[str, list[Reference]] = {}
    for reference in text.candidates(folders):
        same = by_target.get(reference.target)
        if same is None:
            by_target[reference.target] = [reference]
        else:
            same.append(reference)
    reading = _Reading([], {})
    kept: list[Reference] = []
    needed: list[Reference] = []
    for relative, references in by_target.items():
        target = files.target(base, relative)
        if not reported(target):
            reading.named.setdefault(target.path, (references[0], target))
            continue
        for reference in references:
            verdict = text.verdict(reference)
            if verdict is None:
                needed.append(reference)
            elif verdict:
                kept.append(reference)
    if needed:
        needed.sort(key=_offset)
        return _parsed(text.exact_references(folders, text.numbered(needed)), files, base, reported)
    kept.sort(key=_offset)
    for reference in one_per_line(text.numbered(kept)):
        reading.reported.append((reference, files.target(base, reference.target)))
    return reading


def _parsed(
    found: list[Reference], files: _Files, base: str, reported: Callable[[_Target], bool]
) -> _Reading:
    """The :class:`_Reading` of the references the parser confirmed."""
    reading = _Reading([], {})
    for reference in one_per_line(found):
        target = files.target(base, reference.target)
        if reported(target):
            reading.reported.append((reference, target))
        else:
            reading.named.setdefault(target.path, (reference, target))
    return reading


_offset = operator.attrgetter("offset")


def _problem(target: _Target) -> bool:
    return target.outside or target.missing or target.refused is not None


# Plain os.path strings here: this rule runs once per skill and pathlib's overhead dominated it.
def check_references(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    root = os.path.abspath(skill.directory)
    files = _Files(root, skill.listings)
    text = skill.markdown
    reading = _read(text, _folders(root, skill.listings), files, root, _problem)
    for reference, target in reading.reported:
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
                f"the body refers to {reference.target!r}, {target.refused.description}",
            )
        elif target.refused is not None:
            message = f"the body refers to {reference.target!r}, which {target.refused.reason}"
            yield Hit("reference-unreadable", reference.line, message)
        elif not is_illustration(text.text, reference):
            yield Hit(
                "reference-missing",
                reference.line,
                f"the body refers to {reference.target!r}, which does not exist in the skill"
                " folder. Add the file, or fix the path (paths are relative to the folder"
                " holding SKILL.md).",
            )
    docs = [
        (path, reference) for path, (reference, target) in reading.named.items() if target.markdown
    ]
    # Every doc the body names, even in passing: a doc SKILL.md links is one level deep.
    known = {*reading.named, *(target.path for _reference, target in reading.reported)}
    known.add(_joined(root, SKILL_FILE))
    if not docs or files.all_markdown_known(known):
        return  # no doc can link a Markdown file SKILL.md does not: none is read
    for doc, reference in docs:
        content = files.content(doc)
        further = _further_doc(doc, content, files, known | {doc}) if content else None
        if further is not None:
            relative = os.path.relpath(further, root).replace(os.sep, "/")
            yield Hit(
                "reference-nested",
                reference.line or text.numbered([reference])[0].line,
                f"{reference.target!r} refers on to {relative!r}, which SKILL.md does not link;"
                " keep references one level deep: link it from SKILL.md too.",
            )


def _further_doc(doc: str, content: str, files: _Files, known: set[str]) -> str | None:
    """The first Markdown file of the skill that ``doc`` links and ``known`` does not hold."""

    def further(target: _Target) -> bool:
        return target.markdown and not files.is_known(target.path, known)

    reading = _read(MarkdownText(content), _NO_FOLDERS, files, os.path.dirname(doc), further)
    return reading.reported[0][1].path if reading.reported else None
