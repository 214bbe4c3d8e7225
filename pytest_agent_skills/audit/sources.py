"""A skill's files as the audit reads them: every file under the folder, walked without
following a link, each read as text when it is a regular text file within the size cap.

What is not read is said: a link leading out of the skill is a finding (``link-outside``,
made by the scanner from :attr:`SkillSources.outside_links`); a named pipe, a device, a
socket, a binary file, an archive, an oversized file, a file past the count cap and text
that is not valid UTF-8 are each a :class:`~.model.NotAnalyzed` with the reason.  Nothing
here can block (pipes are never opened) or read without bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal, NamedTuple

from ..filenames import printable
from ..files import MAX_SKILL_FILE_BYTES, read_head_if_regular
from .model import NotAnalyzed

FileKind = Literal["markdown", "code", "data"]

#: The most files read in one skill; the rest are listed as not analysed.
MAX_FILES = 2000
#: The deepest folder entered (a skill deeper than this is not a normal one).
MAX_DEPTH = 24
#: Bytes looked at to tell a binary file (a NUL byte) from text.
_SNIFF = 8192

_MARKDOWN = frozenset({".md", ".markdown", ".mdx", ".txt", ".rst", ".html", ".htm", ""})
_CODE = frozenset(
    {
        ".py",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ksh",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".ps1",
        ".psm1",
        ".bat",
        ".cmd",
        ".rb",
        ".pl",
        ".php",
        ".lua",
        ".go",
        ".rs",
        ".java",
        ".r",
        ".swift",
        ".kt",
        ".applescript",
        ".vbs",
    }
)
_ARCHIVES = (
    ".zip",
    ".tar",
    ".tgz",
    ".tar.gz",
    ".gz",
    ".bz2",
    ".xz",
    ".zst",
    ".7z",
    ".rar",
    ".whl",
    ".jar",
    ".egg",
    ".skill",
    ".apk",
    ".dmg",
    ".deb",
    ".rpm",
)
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO); never opened"),
    (stat.S_ISCHR, "a character device; never opened"),
    (stat.S_ISBLK, "a block device; never opened"),
    (stat.S_ISSOCK, "a socket; never opened"),
)


class SourceFile(NamedTuple):
    """One text file of a skill, read."""

    relative: str
    kind: FileKind
    text: str


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts."""
    starts = [0]
    find = text.find
    position = find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = find("\n", position + 1)
    return starts


class OutsideLink(NamedTuple):
    """A symbolic link in the skill that leads out of its folder."""

    relative: str
    target: str


class SkillSources(NamedTuple):
    """What the walk of one skill folder found."""

    files: list[SourceFile]
    not_analyzed: list[NotAnalyzed]
    outside_links: list[OutsideLink]

    def skip(self, relative: str, reason: str) -> None:
        """``relative`` was not analysed, for ``reason``."""
        self.not_analyzed.append(NotAnalyzed(file=relative, reason=reason))


def read_sources(folder: Path) -> SkillSources:
    """Every file under ``folder``, read or listed with the reason it was not."""
    found = SkillSources([], [], [])
    _walk(str(folder), "", str(folder), found, 0)
    found.not_analyzed.sort(key=lambda item: item.file)
    return found


def _walk(path: str, prefix: str, root: str, found: SkillSources, depth: int) -> None:
    try:
        entries = list(os.scandir(path))  # in the system's order: findings are sorted after
    except OSError as error:
        found.skip(prefix or ".", f"a folder that cannot be listed ({error.strerror})")
        return
    for entry in entries:
        # Shown in reports only (files are opened by entry.path): valid UTF-8 whatever the
        # bytes of the name (a name that is not UTF-8 would fail the JSON output).
        relative = printable(prefix + entry.name)
        if entry.is_symlink():
            _link(entry.path, relative, root, found)
        elif entry.is_dir(follow_symlinks=False):
            if entry.name == ".git":
                found.skip(relative, "a git folder")
            elif depth >= MAX_DEPTH:
                found.skip(relative, f"a folder deeper than {MAX_DEPTH} levels")
            else:
                _walk(entry.path, relative + "/", root, found, depth + 1)
        else:
            _file(entry, relative, found)


def _link(path: str, relative: str, folder: str, found: SkillSources) -> None:
    """A link inside the folder is read where it leads (the walk meets its target); one out
    of the folder is never followed."""
    root = os.path.realpath(folder)
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError):  # a loop
        target = ""
    if not target or not (target == root or target.startswith(root.rstrip(os.sep) + os.sep)):
        try:
            shown = printable(os.readlink(path))
        except OSError:
            shown = "?"
        found.outside_links.append(OutsideLink(relative, shown))
    elif not os.path.exists(path):
        found.skip(relative, "a symbolic link that leads nowhere (a loop, or a missing target)")


def _file(entry: os.DirEntry[str], relative: str, found: SkillSources) -> None:
    try:
        status = entry.stat(follow_symlinks=False)
    except OSError as error:
        found.skip(relative, f"cannot be read ({error.strerror})")
        return
    for test, kind in _KINDS:
        if test(status.st_mode):
            found.skip(relative, kind)
            return
    if len(found.files) >= MAX_FILES:
        found.skip(relative, f"past the first {MAX_FILES} files of the skill")
        return
    lowered = relative.lower()
    if lowered.endswith(_ARCHIVES):
        found.skip(relative, "an archive; its members are not unpacked")
        return
    if status.st_size > MAX_SKILL_FILE_BYTES:
        found.skip(relative, f"{status.st_size} bytes, over the {MAX_SKILL_FILE_BYTES} bytes read")
        return
    try:
        content = read_head_if_regular(entry.path, MAX_SKILL_FILE_BYTES + 1)
    except OSError as error:
        found.skip(relative, f"cannot be read ({error.strerror})")
        return
    if content is None:  # swapped for something else since the listing
        found.skip(relative, "changed while read")
    elif len(content) > MAX_SKILL_FILE_BYTES:
        found.skip(relative, f"over the {MAX_SKILL_FILE_BYTES} bytes read")
    elif b"\0" in content[:_SNIFF]:
        found.skip(relative, "a binary file")
    else:
        _text(relative, content, found)


def _text(relative: str, content: bytes, found: SkillSources) -> None:
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        # Read on with the bad bytes replaced, and say that what they hid was not seen.
        text = content.decode("utf-8", errors="replace")
        found.skip(
            relative,
            f"not valid UTF-8 (byte {error.start}); read with the invalid bytes"
            " replaced, so what they encode is not analysed",
        )
    found.files.append(SourceFile(relative, _kind(relative, text), text))


def _kind(relative: str, text: str) -> FileKind:
    name = relative.rsplit("/", 1)[-1].lower()
    suffix = os.path.splitext(name)[1]
    if text.startswith("#!") or suffix in _CODE or name in ("makefile", "dockerfile"):
        return "code"
    if suffix in _MARKDOWN:
        return "markdown"
    return "data"
