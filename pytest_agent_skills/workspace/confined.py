"""Writes and reads inside a workspace that never follow a symlink out of it.

A command may leave symlinks anywhere it can write (``artifacts -> /etc``,
``runs -> /``, ``.metadata.tmp -> ~/.bashrc``), and an interactive command may
plant them while the test process works.  Everything the test process writes
into a workspace goes through :func:`open_folder` / :func:`write_file`: each
folder on the way is opened relative to the previous one with ``O_NOFOLLOW``,
and files are created with ``O_EXCL`` after removing whatever had the name -
so a symlink is refused (or replaced), never followed, whoever planted it and
whenever.  :func:`open_inside` opens a file for reading and then checks where
the opened file really is, so a swap between the check and the open cannot
leak a host file either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ..excerpt import excerpt
from .errors import WorkspacePathError
from .globbing import is_inside

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1024 * 1024


def relative_parts(relative: str | PurePosixPath, what: str) -> list[str]:
    """The components of a workspace-relative path; ``..``, absolute paths and NUL refused."""
    text = str(relative)
    if "\0" in text:
        raise WorkspacePathError(f"{what} {excerpt(text)} must not contain NUL bytes")
    path = PurePosixPath(text)
    if path.is_absolute() or ".." in path.parts:
        raise WorkspacePathError(
            f"{what} {excerpt(text)} must be a relative path inside the workspace, without '..'"
        )
    return [part for part in path.parts if part not in ("", ".")]


@contextlib.contextmanager
def open_folder(
    root: Path, relative: str | PurePosixPath, *, create: bool, what: str = "path"
) -> Iterator[int]:
    """A file descriptor of the folder ``root/relative``, made (0755) when ``create``.

    Raises :class:`WorkspacePathError` when a component is a symlink or not a folder.
    """
    fd = os.open(root, _FOLDER_FLAGS)
    try:
        walked: list[str] = []
        for part in relative_parts(relative, what):
            walked.append(part)
            child = _enter(fd, part, create=create, shown="/".join(walked), what=what, root=root)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _enter(fd: int, part: str, *, create: bool, shown: str, what: str, root: Path) -> int:
    """Open the folder ``part`` of the folder ``fd`` without following a link (made if asked)."""
    for _ in range(2):
        try:
            return os.open(part, _FOLDER_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: open it
                os.mkdir(part, 0o755, dir_fd=fd)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise WorkspacePathError(
                    f"{what}: {excerpt(shown)} in the workspace {str(root)!r} is a symlink or not a"
                    " folder; the workspace never follows a link there"
                ) from None
            raise
    raise FileNotFoundError(errno.ENOENT, "removed while being made", shown)


def write_file(
    root: Path,
    relative: str | PurePosixPath,
    content: bytes | BinaryIO,
    *,
    mode: int = 0o644,
    what: str = "path",
) -> Path:
    """Write ``content`` (bytes, or a binary stream copied in chunks) to ``root/relative``,
    replacing whatever had that name; parents are made.  Returns the path.
    """
    parts = relative_parts(relative, what)
    if not parts:
        raise WorkspacePathError(f"{what} {excerpt(str(relative))} must name a file")
    *folders, name = parts
    with open_folder(root, "/".join(folders), create=True, what=what) as folder:
        _write_new(folder, name, content, mode, f"{what} {excerpt(str(relative))}")
    return root.joinpath(*parts)


def _write_new(folder: int, name: str, content: bytes | BinaryIO, mode: int, shown: str) -> None:
    """Create ``name`` in the open ``folder`` (what had the name is removed first, a link
    never followed) and write ``content`` into it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, mode, dir_fd=folder)
    except FileExistsError:  # a file, a link or a folder has the name
        try:
            os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            raise WorkspacePathError(f"{shown} is a folder in the workspace; name a file") from None
        fd = os.open(name, flags, mode, dir_fd=folder)
    if not isinstance(content, bytes):
        with open(fd, "wb") as handle:
            shutil.copyfileobj(content, handle, _CHUNK)
        return
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_file_renamed(
    root: Path, name: str, data: bytes, *, temporary: str, mode: int, what: str
) -> None:
    """Write ``data`` to ``root/temporary``, then rename it to ``root/name`` (both names
    directly in ``root``), in place of what had that name: ``name`` is never partly written,
    only missing for a moment.

    Not one ``rename`` over the old file: ext4 writes a file renamed over another to disk
    at once (``auto_da_alloc``, its guard against empty files after a crash), then frees the
    block the old one took, a wait on the disk for a file of a workspace that lives only as
    long as its conversation and needs no guard against a crash.
    """
    with open_folder(root, "", create=False) as folder:
        _write_new(folder, temporary, data, mode, f"{what} {temporary!r}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)


def open_inside(path: Path, allowed: Sequence[Path]) -> BinaryIO:
    """Open the regular file ``path`` for reading if it really lies in one of ``allowed``.

    The check is made on the opened file (``/proc/self/fd``), so it holds even if
    a component was swapped for a symlink after the caller resolved the path; a
    FIFO never blocks the open.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if not is_inside(real, allowed):
            raise OSError(errno.EXDEV, f"resolves outside the workspace to {real!r}", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "rb")
