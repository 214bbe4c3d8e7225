"""``rm -rf --one-file-system`` of a workspace tree: read-only folders too, never through a
symlink, never into a mount point.

Every folder is opened relative to its parent with ``O_NOFOLLOW`` and emptied through
its file descriptor, so a link planted anywhere in the tree is removed, never followed
(as ``shutil.rmtree`` does).  A folder that refuses to be read or emptied (the staged
copies are ``chmod a-w``; a command may ``chmod 000`` its own folders) is made ``0700``
through a descriptor of that very folder, and the step retried: no chmod where none is
needed (none as root), and no path looked up twice.

Each folder opened is checked to be on the tree's own mount (its mount id, read from
``/proc/self/fdinfo`` of the descriptor; where that cannot be read, its device): a mount
point inside the tree - another file system, or a bind mount of a folder of the same one,
which has the same device - is never entered nor unmounted.  It is left where it is, and
reported.

Nothing stops at the first failure: whatever can be removed is, and what cannot (a mount
point, an immutable file, a folder refilled meanwhile, ...) is raised at the end as one
:class:`RemovalError` naming each entry left behind, why, and what to do.

``alongside`` names a big folder of the tree that a second thread removes at the same
time, by the same steps: where freeing a folder's disk block waits for the device (ext4
mounted with ``discard`` frees each one with a synchronous discard at every ``rmdir``),
two threads wait at once.  Both are done when :func:`remove_tree` returns.  Not on a file
system in memory (tmpfs, ramfs), where nothing waits and the two threads only hand the GIL
to each other at every system call: one thread removes it all there.
"""

from __future__ import annotations

import errno
import functools
import itertools
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import WorkspaceError

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Opens a folder without the right to read it (what a chmod needs), never through a link.
_HANDLE_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: How often a folder that is not empty after its entries went (refilled meanwhile) is walked again.
_ROUNDS = 3
#: How many entries left behind a :class:`RemovalError` message names (all are in ``left``).
_NAMED = 5
#: The errors of an entry that is not (or no longer) a folder where a folder was listed.
_NOT_A_FOLDER = (errno.ELOOP, errno.ENOTDIR)
#: File systems in memory: no removal waits for a device there.
_IN_MEMORY = frozenset({b"tmpfs", b"ramfs"})


@dataclass(frozen=True)
class LeftBehind:
    """An entry :func:`remove_tree` could not remove: where, why, and what to do."""

    path: Path
    reason: str
    fix: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason} - {self.fix}"


class RemovalError(WorkspaceError):
    """A tree was not removed whole; ``left`` holds each entry left behind (everything
    else is gone)."""

    def __init__(self, path: Path, left: list[LeftBehind]) -> None:
        self.path = path
        self.left = tuple(left)
        named = "; ".join(str(item) for item in self.left[:_NAMED])
        more = f"; and {len(self.left) - _NAMED} more" if len(self.left) > _NAMED else ""
        super().__init__(
            f"{path} was not removed whole ({len(self.left)} left behind, everything else is"
            f" gone): {named}{more}; then remove {path} by hand"
        )


def mount_point_left(path: Path) -> LeftBehind:
    return LeftBehind(
        path,
        "a mount point (another file system, or a bind mount), neither entered nor unmounted",
        f"unmount it ('umount {path}') if nothing else uses it",
    )


def failure_left(path: Path, error: OSError) -> LeftBehind:
    if error.errno == errno.EBUSY:
        return mount_point_left(path)
    reason = f"cannot be removed ({error.strerror or error})"
    if error.errno in (errno.EPERM, errno.EACCES):
        fix = f"check its flags ('lsattr -d {path}'; 'chattr -i' clears immutable) and owner"
    elif error.errno == errno.ENOTEMPTY:
        reason = "still not empty after its entries were removed (something writes into it)"
        fix = "stop whatever still writes into it"
    else:
        fix = "see why, and remove it by hand"
    return LeftBehind(path, reason, fix)


def remove_tree(path: Path, *, alongside: str = "") -> None:
    """Remove ``path``: a folder with everything in it, or a file or symlink (never followed);
    the folder ``alongside`` in it (if it is one) by a second thread meanwhile.

    Raises :class:`RemovalError` naming what was left behind (nothing else escapes).
    """
    path = Path(path)
    left: list[LeftBehind] = []
    try:
        _remove(path, alongside, left)
    except FileNotFoundError:
        pass
    except OSError as error:  # the top itself
        left.append(failure_left(path, error))
    if left:
        raise RemovalError(path, left)


def _remove(path: Path, alongside: str, left: list[LeftBehind]) -> None:
    if not stat.S_ISDIR(os.lstat(path).st_mode):
        path.unlink()
        return
    folder = _open_folder(str(path), None)
    try:
        tree = _Tree(path, _mount_of(folder), left)
        if _is_mount_point(path, tree.mount):
            left.append(mount_point_left(path))
            return
        if alongside and tree.mount[0] == "mount" and _in_memory(tree.mount[1]):
            alongside = ""
        for again in range(_ROUNDS - 1, -1, -1):
            if alongside:
                tree.empty_alongside(folder, alongside)
            else:
                tree.empty(folder, path)
            if left:
                return
            try:
                os.rmdir(path)
                return
            except OSError as error:  # refilled meanwhile: walked again, a few times
                if error.errno != errno.ENOTEMPTY or not again:
                    raise
    finally:
        os.close(folder)


@dataclass
class _Tree:
    """One removal: the tree's top folder, its mount, and what is left behind so far
    (appended to by both threads)."""

    top: Path
    mount: tuple[str, int]
    left: list[LeftBehind]

    def empty(self, folder: int, where: Path, *, skip: str = "") -> None:
        """Remove everything in the open folder ``folder`` (at ``where``) but the entry ``skip``.

        Without recursion: a command may nest folders deeper than Python's recursion limit.
        Each level below ``folder`` holds its descriptor, its entries left, its name and parent.
        A failure is recorded and the walk goes on with the next entry.
        """
        levels = [_Level(folder, _entries(folder, skip), "", None, where)]
        try:
            while levels:
                level = levels[-1]
                for child_name, is_folder in level.entries:
                    if not is_folder:
                        self._delete(child_name, level, is_folder=False)
                        continue
                    child = self._enter(child_name, level)
                    if child is not None:
                        levels.append(child)
                        break
                else:  # ``level`` is empty now: close it, then remove it from its parent
                    levels.pop()
                    if levels:
                        os.close(level.folder)
                        self._remove_emptied(level.name, levels[-1])
        finally:
            for level in levels[1:]:
                os.close(level.folder)

    def _enter(self, name: str, parent: _Level) -> _Level | None:
        """The folder ``name`` of ``parent`` opened and listed; None when it is not to be
        walked (gone, a link or file now - then unlinked - a mount point, or refusing)."""
        try:
            child = _open_folder(name, parent.folder)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno in _NOT_A_FOLDER:  # swapped for a link or a file since listed
                self._delete(name, parent, is_folder=False)
            else:
                self.left.append(failure_left(parent.where / name, error))
            return None
        try:
            if _mount_of(child) != self.mount:
                self.left.append(mount_point_left(parent.where / name))
                os.close(child)
                return None
            return _Level(child, _entries(child), name, parent)
        except OSError as error:
            os.close(child)
            self.left.append(failure_left(parent.where / name, error))
            return None
        except BaseException:
            os.close(child)
            raise

    def _remove_emptied(self, name: str, parent: _Level) -> None:
        """rmdir the folder ``name`` of ``parent`` just emptied; walked again (a few times)
        when something wrote into it meanwhile, not when what is in it was left behind."""
        try:
            self._delete(name, parent, is_folder=True, record=False)
        except OSError as error:
            path = parent.where / name
            if self._consequence(path):
                return
            walked = parent.walked
            again = walked.get(name, 1)
            if error.errno == errno.ENOTEMPTY and again < _ROUNDS:
                walked[name] = again + 1
                parent.entries = itertools.chain([(name, True)], parent.entries)
                return
            self.left.append(failure_left(path, error))

    def _delete(self, name: str, parent: _Level, is_folder: bool, *, record: bool = True) -> None:
        """Unlink the entry ``name`` of ``parent`` (an empty folder: rmdir); when it cannot
        be, the entry is recorded as left behind (``record``) or the error raised."""
        remove: Callable[..., None] = os.rmdir if is_folder else os.unlink
        try:
            try:
                remove(name, dir_fd=parent.folder)
            except PermissionError:  # a read-only folder: make it writable, once
                _make_writable(parent.folder)
                remove(name, dir_fd=parent.folder)
        except FileNotFoundError:
            return
        except OSError as error:
            if is_folder and error.errno == errno.ENOTDIR:  # swapped for a link or a file
                self._delete(name, parent, is_folder=False)
            elif not is_folder and error.errno == errno.EISDIR:  # swapped for a folder
                self._remove_folder(name, parent)
            elif record:
                self.left.append(failure_left(parent.where / name, error))
            else:
                raise

    def _consequence(self, path: Path) -> bool:
        """Whether the folder ``path`` is not empty because of something already left behind
        in it (then it is not named again)."""
        return any(item.path.is_relative_to(path) for item in self.left)

    def _remove_folder(self, name: str, parent: _Level) -> None:
        """Remove the folder ``name`` of ``parent``, with its contents."""
        child = self._enter(name, parent)
        if child is None:
            return
        try:
            self.empty(child.folder, child.where)
        finally:
            os.close(child.folder)
        self._remove_emptied(name, parent)

    def empty_alongside(self, folder: int, name: str) -> None:
        """:meth:`empty`, the folder ``name`` in it removed by a second thread meanwhile."""
        try:
            handed_over = stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
        except OSError:  # missing, or ``folder`` refuses the look-up: removed the usual way
            handed_over = False
        if not handed_over:
            self.empty(folder, self.top)
            return
        errors: list[BaseException] = []
        top = _Level(folder, iter(()), "", None, self.top)

        def remove_it() -> None:
            try:
                self._remove_folder(name, top)
            except BaseException as error:  # raised again in the caller's thread
                errors.append(error)

        helper = threading.Thread(target=remove_it, name=f"remove {name}")
        try:
            helper.start()
        except RuntimeError:  # no new thread now (interpreter shutdown): all in this one
            self.empty(folder, self.top)
            return
        try:
            self.empty(folder, self.top, skip=name)
        finally:
            helper.join()
        if errors:
            raise errors[0]


class _Level:
    """A folder being emptied: its descriptor, entries still to go, name in its parent, the
    level of its parent (at the top: its path), and how often each of its folders was
    walked.  Its path is made only when something needs it (an error naming it)."""

    __slots__ = ("_walked", "_where", "entries", "folder", "name", "parent")

    def __init__(
        self,
        folder: int,
        entries: Iterator[tuple[str, bool]],
        name: str,
        parent: _Level | None,
        where: Path | None = None,
    ) -> None:
        self.folder = folder
        self.entries = entries
        self.name = name
        self.parent = parent
        self._where = where
        self._walked: dict[str, int] | None = None

    @property
    def where(self) -> Path:
        if self._where is None:
            assert self.parent is not None
            self._where = self.parent.where / self.name
        return self._where

    @property
    def walked(self) -> dict[str, int]:
        if self._walked is None:
            self._walked = {}
        return self._walked


def _entries(folder: int, skip: str = "") -> Iterator[tuple[str, bool]]:
    """The entries of the open folder ``folder`` but ``skip``, each with whether it is a
    folder (a link never is); listed whole before any is removed."""
    with os.scandir(folder) as iterator:
        entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in iterator if e.name != skip]
    return iter(entries)


def _mount_of(folder: int) -> tuple[str, int]:
    """Which mount the open folder ``folder`` is on: its mount id (``/proc/self/fdinfo``),
    or its device where ``/proc`` cannot tell (a bind mount then goes unseen)."""
    try:
        info = os.open(f"/proc/self/fdinfo/{folder}", os.O_RDONLY | os.O_CLOEXEC)
        try:
            text = os.read(info, 4096)
        finally:
            os.close(info)
        start = text.find(b"mnt_id:")
        if start >= 0:
            return ("mount", int(text[start + 7 : text.find(b"\n", start)]))
    except (OSError, ValueError):
        pass
    return ("device", os.fstat(folder).st_dev)


@functools.lru_cache(maxsize=64)
def _in_memory(mount_id: int) -> bool:
    """Whether the mount ``mount_id`` is a file system in memory (its type, read from
    ``/proc/self/mountinfo``); False where that cannot tell.  Kept per id: a stale answer
    (an id reused by a later mount) only costs time, never decides what is removed."""
    try:
        with open("/proc/self/mountinfo", "rb") as table:
            for line in table:
                fields = line.split()
                if fields and fields[0] == b"%d" % mount_id and b"-" in fields:
                    return fields[fields.index(b"-") + 1] in _IN_MEMORY
    except (OSError, IndexError):
        pass
    return False


def _is_mount_point(path: Path, mount: tuple[str, int]) -> bool:
    """Whether the folder ``path``, on ``mount``, is itself a mount point (its parent is on
    another mount): then nothing of it is removed."""
    if path.parent == path:
        return True
    try:
        parent = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return _mount_of(parent) != mount
    finally:
        os.close(parent)


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
