"""``rm -rf`` of a workspace tree: read-only folders too, never through a symlink.

Every folder is opened relative to its parent with ``O_NOFOLLOW`` and emptied through
its file descriptor, so a link planted anywhere in the tree is removed, never followed
(as ``shutil.rmtree`` does).  A folder that refuses to be read or emptied (the staged
copies are ``chmod a-w``; a command may ``chmod 000`` its own folders) is made ``0700``
through a descriptor of that very folder, and the step retried: no chmod where none is
needed (none as root), and no path looked up twice.

``alongside`` names a big folder of the tree that a second thread removes at the same
time, by the same steps: where freeing a folder's disk block waits for the device (ext4
mounted with ``discard`` frees each one with a synchronous discard, ~70 us an ``rmdir``),
two threads wait at once.  Both are done when :func:`remove_tree` returns.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Opens a folder without the right to read it (what a chmod needs), never through a link.
_HANDLE_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path, *, alongside: str = "") -> None:
    """Remove ``path``: a folder with everything in it, or a file or symlink (never followed);
    the folder ``alongside`` in it (if it is one) by a second thread meanwhile."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    folder = _open_folder(str(path), None)
    try:
        if alongside:
            _empty_alongside(folder, alongside)
        else:
            _empty(folder)
    finally:
        os.close(folder)
    os.rmdir(path)


def _empty(folder: int, *, skip: str = "") -> None:
    """Remove everything in the open folder ``folder`` but the entry ``skip``.

    Without recursion: a command may nest folders deeper than Python's recursion limit.
    Each level below ``folder`` holds its descriptor, its entries left and its name.
    """
    levels: list[tuple[int, Iterator[tuple[str, bool]], str]] = [
        (folder, _entries(folder, skip), "")
    ]
    try:
        while levels:
            current, entries, name = levels[-1]
            for child_name, is_folder in entries:
                if is_folder:
                    child = _open_folder(child_name, current)
                    try:
                        levels.append((child, _entries(child), child_name))
                    except BaseException:
                        os.close(child)
                        raise
                    break
                _delete(child_name, current, is_folder=False)
            else:  # ``current`` is empty now: close it, then remove it from its parent
                levels.pop()
                if levels:
                    os.close(current)
                    _delete(name, levels[-1][0], is_folder=True)
    finally:
        for current, _, _ in levels[1:]:
            os.close(current)


def _entries(folder: int, skip: str = "") -> Iterator[tuple[str, bool]]:
    """The entries of the open folder ``folder`` but ``skip``, each with whether it is a
    folder (a link never is); listed whole before any is removed."""
    with os.scandir(folder) as iterator:
        entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in iterator if e.name != skip]
    return iter(entries)


def _remove_folder(name: str, folder: int) -> None:
    """Remove the folder ``name`` of the open folder ``folder``, with its contents."""
    child = _open_folder(name, folder)
    try:
        _empty(child)
    finally:
        os.close(child)
    _delete(name, folder, is_folder=True)


def _delete(name: str, folder: int, is_folder: bool) -> None:
    """Unlink the entry ``name`` of the open folder ``folder`` (an empty folder: rmdir)."""
    remove: Callable[..., None] = os.rmdir if is_folder else os.unlink
    try:
        remove(name, dir_fd=folder)
    except PermissionError:  # a read-only folder: make it writable, once
        _make_writable(folder)
        remove(name, dir_fd=folder)


def _empty_alongside(folder: int, name: str) -> None:
    """:func:`_empty`, the folder ``name`` in it removed by a second thread meanwhile."""
    try:
        handed_over = stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:  # missing, or ``folder`` refuses the look-up: removed the usual way
        handed_over = False
    if not handed_over:
        _empty(folder)
        return
    errors: list[BaseException] = []

    def remove_it() -> None:
        try:
            _remove_folder(name, folder)
        except BaseException as error:  # raised again in the caller's thread
            errors.append(error)

    helper = threading.Thread(target=remove_it, name=f"remove {name}")
    try:
        helper.start()
    except RuntimeError:  # no new thread now (interpreter shutdown): all in this one
        _empty(folder)
        return
    try:
        _empty(folder, skip=name)
    finally:
        helper.join()
    if errors:
        raise errors[0]


def _open_folder(name: str, parent: int | None) -> int:
    """The folder ``name`` of ``parent`` (a path when None) opened for reading; when it
    refuses, it and ``parent`` are made ``0700`` first."""
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except PermissionError:
        if parent is not None:
            _make_writable(parent)  # it may be the one refusing the way in
        handle = os.open(name, _HANDLE_FLAGS, dir_fd=parent)
        try:
            _make_writable(handle)
            # The same folder again, through the handle: not its name, which may lead elsewhere now.
            return os.open(f"/proc/self/fd/{handle}", _FOLDER_FLAGS & ~os.O_NOFOLLOW)
        finally:
            os.close(handle)


def _make_writable(folder: int) -> None:
    """``chmod 0700`` the folder open as ``folder`` (an ``O_PATH`` handle included)."""
    os.chmod(f"/proc/self/fd/{folder}", 0o700)
