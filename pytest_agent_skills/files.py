"""Reading the files a skill or a test suite provides, with care.

A skill may come from anywhere (a pull request, a downloaded archive), so reading
one of its files never:

* follows a symbolic link out of the skill folder (a ``SKILL.md`` linked to a
  secret file is not read, so nothing of it can be quoted);
* reads anything but a regular file: a named pipe would block forever and
  ``/dev/zero`` never ends.  Files are opened with ``O_NONBLOCK`` and
  ``O_NOFOLLOW`` and their kind checked on the open file (``fstat``); a file
  reached through a link is checked before it is opened as well, so a link to a
  device never opens it;
* reads more than a cap (:data:`MAX_SKILL_FILE_BYTES` for ``SKILL.md`` and the
  docs): a 3 GiB sparse file is refused from its size, before any read.

Each refusal is a :class:`FileReadError` naming the file, what it is and the cap; a
missing file is the usual :class:`FileNotFoundError`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import LocatedError

MIB = 1024 * 1024
#: The largest ``SKILL.md`` or doc read: 4 MiB, the reference runtime's read cap for
#: output files (the largest file in a corpus of 200 public skills is 0.15 MiB).
MAX_SKILL_FILE_BYTES = 4 * MIB
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | _O_NOFOLLOW
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_GROWTH_CHUNK = 64 * 1024
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a loop of symbolic links"),
)


class FileReadError(LocatedError):
    """A file that is not read: ``reason`` says why and how to fix it (without the path)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.reason = reason
        super().__init__(path, None, reason)


class OutsideFolderError(FileReadError):
    """A symbolic link that leads out of the folder the file belongs to: the path itself (to
    a file, or to a folder: ``to_folder``), or a folder on its way (``through_folder``).
    ``description`` is the reason without its leading "is ", for messages that name the file
    another way."""

    def __init__(
        self, path: Path | str, *, through_folder: bool = False, to_folder: bool = False
    ) -> None:
        copy = "folder" if through_folder or to_folder else "file"
        self.description = (
            f"{'reached through ' if through_folder else ''}a symbolic link to a {copy} outside"
            " the skill folder; it is not followed (only the skill folder is staged for the"
            f" agent). Replace the link with a copy of the {copy}."
        )
        super().__init__(path, f"is {self.description}")


class NotRegularFileError(FileReadError):
    """A folder, a named pipe, a device, a socket: not a regular file."""

    def __init__(self, path: Path | str, kind: str) -> None:
        self.kind = kind
        super().__init__(
            path, f"is {kind}, not a regular file; only regular files are read. Replace it with"
            " a regular file."
        )


class FileTooLargeError(FileReadError):
    """A file over the size cap."""


class UnreadableFileError(FileReadError):
    """A file the operating system does not let us read (permissions, a link loop)."""


def read_limited(path: Path | str, *, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``limit`` of them.

    ``what`` names the kind of file in the size message (``"scenario file"``).
    """
    try:
        _require_regular(path, os.stat(path).st_mode)  # a fifo or a device is never opened
        descriptor = os.open(path, _OPEN_FLAGS & ~_O_NOFOLLOW)
    except OSError as error:
        raise _os_error(path, error) from None
    return _read_open(path, descriptor, limit, what)


def read_head_if_regular(path: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``path`` if it is still a regular file; None when it is
    gone, or is now a link, a named pipe, a socket or a folder (a running command may swap a
    file after a walk saw it): never followed, never blocked on."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno in _LINK_ERRNOS or error.errno == errno.ENXIO:  # ENXIO: a socket
            return None
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None
        return _read_at_most(descriptor, limit, status.st_size)
    finally:
        os.close(descriptor)


def read_inside(
    folder: Path | str, relative: str, *, limit: int, what: str = "file"
) -> bytes:
    """The bytes of ``folder/relative``, a regular file inside ``folder``, at most ``limit``.

    The file is opened beneath ``folder`` without following any link (``folder`` itself may
    be one); when a link is met on the way, it is resolved and must stay inside ``folder``.
    """
    path = os.path.join(folder, relative)
    try:
        try:
            descriptor = _open_beneath(str(folder), relative, path)
        except _LinkOnTheWay:
            descriptor = _open_resolved(path, folder)
    except OSError as error:
        raise _os_error(path, error) from None
    return _read_open(path, descriptor, limit, what)


def read_skill_file(directory: Path | str, relative: str) -> bytes:
    """The bytes of ``directory/relative``, a file of the skill in ``directory``: a regular
    file inside the folder (links resolved), of at most :data:`MAX_SKILL_FILE_BYTES`."""
    return read_inside(directory, relative, limit=MAX_SKILL_FILE_BYTES, what="skill file")


def resolve_inside(folder: Path | str, path: str) -> str:
    """The real path of ``path`` (under ``folder``), its links resolved; raises
    :class:`OutsideFolderError` when they lead out of ``folder``.  Nothing is opened."""
    inside = os.path.realpath(folder).rstrip(os.sep) + os.sep
    target = os.path.realpath(path)
    if not target.startswith(inside):
        parent = os.path.realpath(os.path.dirname(path)) + os.sep
        if not parent.startswith(inside):
            raise OutsideFolderError(path, through_folder=True)
        raise OutsideFolderError(path, to_folder=os.path.isdir(target))  # a stat, never an open
    return target


def check_inside(folder: Path | str, relative: str, *, limit: int, what: str = "file") -> str:
    """Refuse ``folder/relative`` as :func:`read_inside` would, from the file system's
    records alone (nothing is opened): a link leading out of ``folder``
    (:class:`OutsideFolderError`), anything but a regular file, a file over ``limit``.  A
    missing file is :class:`FileNotFoundError`.  Returns the file's real path."""
    path = os.path.join(folder, relative)
    target = resolve_inside(folder, path)
    try:
        status = os.stat(target)
    except OSError as error:
        raise _os_error(path, error) from None
    _require_regular(path, status.st_mode)
    if status.st_size > limit:
        raise _too_large(path, status.st_size, limit, what)
    return target


def check_skill_file(
    path: str, status: os.stat_result, user: tuple[int, int] | None = None
) -> None:
    """Refuse ``path`` as :func:`read_skill_file` would, without opening or reading it.

    ``status`` is its ``lstat``, and the caller met it without any symbolic link on the way
    from the skill folder (a folder listing says so): nothing can lead out of the skill.
    Raises the reader's error for anything but a regular file, for a file this user may not
    read (the error of a real attempt to open it, never made for a pipe or a device), and
    for a file over :data:`MAX_SKILL_FILE_BYTES`.  ``user``: the process's (real, effective)
    user ids when the caller has them (see :func:`user_ids`), which may spare the
    ``os.access`` call.
    """
    _require_regular(path, status.st_mode)
    if not (user is not None and _owner_may_read(status, user)) and not os.access(
        path, os.R_OK
    ):
        try:
            os.close(os.open(path, _OPEN_FLAGS))  # the reader's own attempt, for its error
        except OSError as error:
            raise _os_error(path, error) from None
    if status.st_size > MAX_SKILL_FILE_BYTES:
        raise _too_large(path, status.st_size, MAX_SKILL_FILE_BYTES, "skill file")


def user_ids() -> tuple[int, int]:
    """The process's real and effective user ids (two system calls: ask once for many files)."""
    return os.getuid(), os.geteuid()


def _owner_may_read(status: os.stat_result, user: tuple[int, int]) -> bool:
    """Whether the permission bits alone say ``os.access(R_OK)`` is yes: the real and effective
    user (``user``) own the file (the owner's bits then decide, ACL or not) and everyone may
    read it (so does a server that maps the user to another, as NFS maps root).  Any other
    case asks the system.  (Not weighed: a security module or a FUSE file system refusing a
    file its bits open to everyone; the doc's reading then fails later and reports nothing.)"""
    real, effective = user
    return (
        status.st_mode & _READABLE_BY_ALL == _READABLE_BY_ALL
        and status.st_uid == real == effective
    )


_READABLE_BY_ALL = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


class _LinkOnTheWay(Exception):
    """A symbolic link between the folder and the file: resolve it and check where it leads."""


#: What opening a link with O_NOFOLLOW fails with: ELOOP (EMLINK on FreeBSD); ENOTDIR with
#: O_DIRECTORY too (a folder on the way), which a file standing there gives as well.
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
_DIRECTORY_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
)
_BENEATH = os.open in os.supports_dir_fd and _O_NOFOLLOW != 0
_NOT_NAMES = frozenset({"", ".", ".."})


def _open_beneath(folder: str, relative: str, path: str) -> int:
    """A descriptor for ``path`` (``folder/relative``) met without any link, else
    :class:`_LinkOnTheWay`."""
    parts = relative.replace(os.sep, "/").split("/")
    if not _BENEATH or not _NOT_NAMES.isdisjoint(parts):
        raise _LinkOnTheWay
    try:
        if len(parts) == 1:  # the common case, SKILL.md: no folder to walk
            return os.open(path, _OPEN_FLAGS)
        directory = os.open(folder, _DIRECTORY_FLAGS & ~_O_NOFOLLOW)
        try:
            for part in parts[:-1]:
                inner = os.open(part, _DIRECTORY_FLAGS, dir_fd=directory)
                os.close(directory)
                directory = inner
            return os.open(parts[-1], _OPEN_FLAGS, dir_fd=directory)
        finally:
            os.close(directory)
    except OSError as error:
        if error.errno in _LINK_ERRNOS:
            raise _LinkOnTheWay from None
        raise


def _open_resolved(path: str, folder: Path | str) -> int:
    """A descriptor for ``path`` whose links were resolved, when they stay inside ``folder``."""
    target = resolve_inside(folder, path)
    _require_regular(path, os.lstat(target).st_mode)  # a fifo or a device is never opened
    return os.open(target, _OPEN_FLAGS)


def _read_open(path: Path | str, descriptor: int, limit: int, what: str) -> bytes:
    """Read the open ``descriptor`` (closed here) if it is a regular file within ``limit``."""
    try:
        status = os.fstat(descriptor)
        _require_regular(path, status.st_mode)
        if status.st_size > limit:
            raise _too_large(path, status.st_size, limit, what)
        content = _read_at_most(descriptor, limit + 1, status.st_size)
    finally:
        os.close(descriptor)
    if len(content) > limit:
        raise _too_large(path, len(content), limit, what)
    return content


def _read_at_most(descriptor: int, count: int, size: int) -> bytes:
    """Up to ``count`` bytes of an open regular file of ``size`` bytes, to its end: one read
    when it did not grow (a read of ``count`` bytes would allocate them all)."""
    parts: list[bytes] = []
    received = 0
    wanted = size + 1  # one more byte: the end of the file, or that it grew
    while received < count:
        chunk = os.read(descriptor, min(wanted, count - received))
        if not chunk:
            break
        parts.append(chunk)
        received += len(chunk)
        wanted = _GROWTH_CHUNK
    return b"".join(parts)


def _os_error(path: Path | str, error: OSError) -> OSError | FileReadError:
    """A missing file stays :class:`FileNotFoundError`; any other failure is unreadable."""
    if isinstance(error, (FileNotFoundError, NotADirectoryError)):
        return FileNotFoundError(error.errno, error.strerror, str(path))
    return UnreadableFileError(
        path,
        f"cannot be read ({error.strerror or error}); make it readable by the user running"
        " the tests.",
    )


def _require_regular(path: Path | str, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "an unknown kind of file")
    raise NotRegularFileError(path, kind)


def _too_large(path: Path | str, size: int, limit: int, what: str) -> FileTooLargeError:
    return FileTooLargeError(
        path,
        f"is {size} bytes, over the limit of {limit} bytes ({limit / MIB:g} MiB) for a {what};"
        " make it smaller (split it into several files).",
    )


def write_atomic(path: Path | str, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` whole or not at all: a temporary file
    beside it, renamed over it. The one way the package writes a file it makes."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        temporary.write_bytes(data)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
