"""Folder listings taken once: each folder is scanned (``os.scandir``) on first use, and its
entries then answer what a run asks about its files - is it there, is it a folder, a
symbolic link, a regular file - without one system call per question.

A validation run shares one :class:`FolderListings` between the walk that finds the skills
and the rules that check the files their bodies name, so every folder is listed once per
run.  Nothing outlives the object: a new run lists again.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from enum import Enum

from .files import user_ids

_NOT_NAMES = frozenset({"", ".", ".."})


class Kind(Enum):
    """What a path is, as far as a listing tells without following links."""

    FILE = "a regular file"
    FOLDER = "a folder"
    #: Not in the listing of its (real) folder, or a file stands where a folder should: most
    #: likely missing (a case-insensitive file system may still find it; ask it).
    ABSENT = "absent"
    #: A symbolic link on the way or at the end, a named pipe, a device, a folder that
    #: cannot be listed: the listing does not settle it; ask the file system.
    UNSETTLED = "unsettled"


_UNSETTLED = (Kind.UNSETTLED, None)
_ABSENT = (Kind.ABSENT, None)
_FOLDER = (Kind.FOLDER, None)


class FolderListings:
    """``name -> entry`` of folders, each folder scanned once, on first use."""

    def __init__(self) -> None:
        self._folders: dict[str, dict[str, os.DirEntry[str]] | None] = {}
        self._user: tuple[int, int] | None = None

    def user_ids(self) -> tuple[int, int]:
        """The process's real and effective user ids, asked once per run: whether a file the
        listings show may be read depends on them (see ``files.check_skill_file``)."""
        if self._user is None:
            self._user = user_ids()
        return self._user

    def is_file(self, folder: str, name: str) -> bool | None:
        """Whether ``folder/name`` is a file, links followed (see :func:`is_file`), when the
        folder's listing holds the name; None when it does not (absent, or the folder cannot be
        listed: a case-insensitive file system may still find it; ask it)."""
        entries = self.entries(folder)
        entry = entries.get(name) if entries is not None else None
        return None if entry is None else is_file(entry)

    def entries(self, folder: str) -> dict[str, os.DirEntry[str]] | None:
        """The entries of ``folder`` by name; None when it cannot be listed."""
        if folder in self._folders:
            return self._folders[folder]
        found: dict[str, os.DirEntry[str]] | None
        try:
            with os.scandir(folder) as scan:
                found = {entry.name: entry for entry in scan}
        except OSError:
            found = None
        self._folders[folder] = found
        return found

    def find(self, root: str, relative: str) -> tuple[Kind, os.DirEntry[str] | None]:
        """What ``root/relative`` is, when its listings settle it: reached from ``root``
        through real folders only (no symbolic link on the way or at the end); the entry
        when it is a regular file."""
        folder = root
        parts = relative.split("/")
        last = len(parts) - 1
        for index, part in enumerate(parts):
            entries = self.entries(folder)
            if entries is None or part in _NOT_NAMES:
                return _UNSETTLED
            entry = entries.get(part)
            if entry is None:
                return _ABSENT
            if entry.is_dir(follow_symlinks=False):
                if index == last:
                    return _FOLDER
                folder = f"{folder}/{part}"
            elif entry.is_file(follow_symlinks=False):
                return (Kind.FILE, entry) if index == last else _ABSENT  # (ENOTDIR)
            else:
                return _UNSETTLED  # a link, a pipe, a device
        raise AssertionError("unreachable: the last part returns")  # pragma: no cover

    def tree(self, root: str) -> tuple[list[str], bool] | None:
        """Every entry below ``root`` that is not a folder, as paths from ``root`` ('/'), and
        whether a symbolic link to a folder is among them; hidden folders and nested skills
        included, links not followed.  None when a folder cannot be listed."""
        found: list[str] = []
        linked_folder = False
        stack = [""]
        while stack:
            prefix = stack.pop()
            entries = self.entries(f"{root}/{prefix}" if prefix else root)
            if entries is None:
                return None
            for name, entry in entries.items():
                path = f"{prefix}/{name}" if prefix else name
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                    continue
                if entry.is_symlink() and entry.is_dir():
                    linked_folder = True
                found.append(path)
        return found, linked_folder


def is_file(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a file, links followed (as ``os.path.isfile`` tells: an entry whose
    link cannot be followed is none)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a folder, links followed (as ``os.path.isdir`` tells)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def is_venv(folder: str, names: Collection[str]) -> bool:
    """pytest's test for a virtual environment, which it does not collect, on the ``names`` a
    listing of ``folder`` holds: a ``pyvenv.cfg`` file (a link to none does not count, as in
    pytest) or a conda environment's ``conda-meta/history``."""
    if "pyvenv.cfg" in names and os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
        return True
    return "conda-meta" in names and os.path.isfile(os.path.join(folder, "conda-meta", "history"))
