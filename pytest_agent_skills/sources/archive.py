"""Detect the format of a skill-root file and unpack it safely.

Formats: zip, tar, gzip-compressed tar, and a bare ``SKILL.md``.  The name
decides first (``.zip``, ``.tar``, ``.tar.gz`` / ``.tgz``, ``SKILL.md``), then
the first bytes (``PK\\x03\\x04``, ``\\x1f\\x8b``, ``ustar`` at offset 257, a
``---`` front-matter fence).

Unpacking never trusts the archive: every entry name is checked before
anything is written (no absolute paths, ``..``, drive letters, backslashes,
control characters), only regular files and folders are accepted (links,
devices and fifos reject the whole archive), files are created with
``O_EXCL | O_NOFOLLOW``, and sizes are measured on the bytes actually written
(per file and in total), so an archive that lies about its sizes is stopped.
"""

from __future__ import annotations

import gzip
import io
import lzma
import os
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from contextlib import nullcontext
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO, Literal, cast

from ..filenames import SKILL_FILE
from ..skill import parse_skill_text
from .cache import READY_FILE
from .errors import ArchiveError, ArchiveRejectedError, CorruptArchiveError
from .options import Limits

ArchiveFormat = Literal["zip", "tar", "tar.gz", "skill-md"]

HEAD_BYTES = 512
CHUNK_BYTES = 256 * 1024
TAR_METADATA_ALLOWANCE = 16 * 1024 * 1024
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_DRIVE = re.compile(r"^[A-Za-z]:")
_SAFE_FOLDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LINK_REASON = "is a {kind} link (links are not allowed in skill archives)"
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_BINARY

# What the zip, tar and gzip readers raise on malformed input.
_READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OverflowError,
    struct.error,
    OSError,
)


def detect_format(name: str, head: bytes) -> ArchiveFormat | None:
    """The format of a root file named ``name`` starting with ``head``, or None."""
    lower = name.lower()
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if lower.endswith(".tar"):
        return "tar"
    if lower.rsplit("/", 1)[-1] == "skill.md":
        return "skill-md"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head[257:262] == b"ustar":
        return "tar"
    if re.match(rb"^(\xef\xbb\xbf)?---[ \t]*\r?\n", head):
        return "skill-md"
    return None


def unpack(
    data: Path | BinaryIO,
    fmt: ArchiveFormat,
    dest: Path,
    *,
    shown: str,
    url_path: PurePosixPath,
    limits: Limits,
) -> Path:
    """Unpack ``data`` under the new folder ``dest``; the skill root inside it.

    An archive holding a single top-level folder that is not itself a skill is
    unwrapped; a root that is itself a skill (``SKILL.md`` at the top, or a
    bare ``SKILL.md``) is moved into a sub-folder named after the skill, so the
    skill folder is never named after the cache key.
    """
    os.mkdir(dest)
    raw = dest / "raw"
    os.mkdir(raw)
    with open(data, "rb") if isinstance(data, Path) else nullcontext(data) as stream:
        if fmt == "skill-md":
            _write_bare_skill(stream, raw, shown, limits)
        else:
            extractor = _Extractor(raw, shown, limits)
            if fmt == "zip":
                extractor.unpack_zip(stream)
            else:
                extractor.unpack_tar(stream, compressed=fmt == "tar.gz")
            if extractor.files == 0:
                raise ArchiveRejectedError(
                    shown, "the archive holds no files; it cannot hold a skill"
                )
    return _arrange(raw, dest, shown, url_path)


def skill_folder_name(skill_text: str, url_path: PurePosixPath) -> str:
    """A folder name for a lone skill: its front-matter name, else the URL's file stem or parent."""
    parsed = parse_skill_text(skill_text, Path(SKILL_FILE))
    if parsed.front_matter is not None:
        name = parsed.front_matter.values.get("name")
        if isinstance(name, str) and _SAFE_FOLDER.match(name.strip()):
            return name.strip()
    name = url_path.name
    stem = name[: -len(".tar.gz")] if name.lower().endswith(".tar.gz") else PurePosixPath(name).stem
    for candidate in (stem, url_path.parent.name):
        if candidate.lower() != "skill" and _SAFE_FOLDER.match(candidate):
            return candidate
    return "skill"


def _write_bare_skill(stream: BinaryIO, raw: Path, shown: str, limits: Limits) -> None:
    content = stream.read(limits.max_file_bytes + 1)
    if len(content) > limits.max_file_bytes:
        raise ArchiveRejectedError(
            shown,
            f"the SKILL.md is larger than the limit of {limits.max_file_bytes} bytes per file",
            entry=SKILL_FILE,
        )
    (raw / SKILL_FILE).write_bytes(content)


def _arrange(raw: Path, dest: Path, shown: str, url_path: PurePosixPath) -> Path:
    root = raw
    children = list(raw.iterdir())
    if len(children) == 1 and children[0].is_dir() and not (children[0] / SKILL_FILE).exists():
        root = children[0]
    if (root / SKILL_FILE).is_file():
        text = (root / SKILL_FILE).read_text(encoding="utf-8", errors="replace")
        wrapper = dest / "root"
        os.mkdir(wrapper)
        os.rename(root, wrapper / skill_folder_name(text, url_path))
        root = wrapper
    if os.path.lexists(root / READY_FILE):
        raise ArchiveRejectedError(
            shown,
            f"entry {READY_FILE!r} uses the name reserved for the cache's completion marker;"
            " remove it from the archive",
            entry=READY_FILE,
        )
    return root


def _zip_declared_entries(stream: BinaryIO) -> int:
    """The entry count in the zip's end record, read before zipfile loads every entry.

    A 64 MiB central directory can describe over a million entries; checking
    the count first keeps that from being parsed into memory at all.
    """
    end_record = getattr(zipfile, "_EndRecData", None)
    if end_record is None:
        return 0
    data = end_record(stream)
    stream.seek(0)
    total_index: int = zipfile._ECD_ENTRIES_TOTAL  # type: ignore[attr-defined]
    return int(data[total_index]) if data else 0


class _CappedReader:
    """A read-only stream that fails once more than ``cap`` bytes were read.

    It sits between the gzip decompressor and the tar reader, so a compressed
    bomb is stopped after ``cap`` decompressed bytes, headers included.
    """

    def __init__(self, stream: BinaryIO, cap: int, on_exceed: Exception) -> None:
        self.stream = stream
        self.cap = cap
        self.count = 0
        self.on_exceed = on_exceed

    def read(self, size: int | None = -1) -> bytes:
        allowed = self.cap - self.count + 1
        size = allowed if size is None or size < 0 else min(size, allowed)
        data = self.stream.read(size)
        self.count += len(data)
        if self.count > self.cap:
            raise self.on_exceed
        return data


class _Extractor:
    """Writes checked entries under ``target`` and keeps the counts and limits."""

    def __init__(self, target: Path, shown: str, limits: Limits) -> None:
        self.target = target
        self.shown = shown
        self.limits = limits
        self.entries = 0
        self.files = 0
        self.total_bytes = 0
        self.file_parts: set[tuple[str, ...]] = set()
        self.dir_parts: set[tuple[str, ...]] = set()

    # -- errors -----------------------------------------------------------

    def reject(self, name: str, reason: str) -> ArchiveRejectedError:
        return ArchiveRejectedError(self.shown, f"entry {name!r} {reason}", entry=name)

    def corrupt(self, name: str | None, error: BaseException) -> CorruptArchiveError:
        reason = str(error) or type(error).__name__
        where = f" at entry {name!r}" if name is not None else ""
        return CorruptArchiveError(
            self.shown,
            f"the archive is corrupt or truncated{where} ({type(error).__name__}: {reason})",
            entry=name,
        )

    # -- zip --------------------------------------------------------------

    def unpack_zip(self, stream: BinaryIO) -> None:
        current: str | None = None
        try:
            self.check_count(_zip_declared_entries(stream), None)
            with zipfile.ZipFile(stream) as archive:
                infos = archive.infolist()
                self.check_count(len(infos), infos[-1].filename if infos else "")
                for info in infos:
                    current = info.filename
                    self.check_zip_entry(info)
                    if info.filename.endswith("/"):
                        self.add_dir(info.filename)
                        continue
                    with archive.open(info) as member:
                        self.add_file(info.filename, member, info.external_attr >> 16)
        except ArchiveError:
            raise
        except zipfile.BadZipFile as error:
            if current is not None and "CRC" in str(error):
                raise CorruptArchiveError(
                    self.shown,
                    f"entry {current!r} does not match its recorded size or checksum (the"
                    " archive is corrupt or lies about its sizes)",
                    entry=current,
                ) from None
            raise self.corrupt(current, error) from None
        except _READ_ERRORS as error:
            raise self.corrupt(current, error) from None

    def check_zip_entry(self, info: zipfile.ZipInfo) -> None:
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            raise self.reject(info.filename, _LINK_REASON.format(kind="symbolic"))
        if kind in (stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK):
            raise self.reject(info.filename, "is a device file, fifo or socket (not allowed)")
        if info.flag_bits & 0x1:
            raise self.reject(info.filename, "is encrypted (encrypted archives are not supported)")
        self.check_size(info.filename, info.file_size)

    # -- tar --------------------------------------------------------------

    def unpack_tar(self, stream: BinaryIO, *, compressed: bool) -> None:
        current: str | None = None
        source = cast(BinaryIO, gzip.GzipFile(fileobj=stream, mode="rb")) if compressed else stream
        capped = _CappedReader(
            source,
            self.limits.max_total_bytes + TAR_METADATA_ALLOWANCE,
            ArchiveRejectedError(
                self.shown,
                f"the archive unpacks to more than {self.limits.max_total_bytes} bytes in total"
                " (limit)",
            ),
        )
        try:
            with tarfile.open(fileobj=capped, mode="r|") as archive:  # type: ignore[call-overload]
                for member in archive:
                    current = member.name
                    self.check_count(self.entries + 1, member.name)
                    self.check_tar_entry(member)
                    if member.isdir():
                        self.add_dir(member.name)
                        continue
                    extracted = archive.extractfile(member)
                    if extracted is None:
                        raise self.reject(member.name, "has no readable content")
                    self.add_file(member.name, extracted, member.mode)
        except ArchiveError:
            raise
        except _READ_ERRORS as error:
            raise self.corrupt(current, error) from None

    def check_tar_entry(self, member: tarfile.TarInfo) -> None:
        name = member.name
        if member.issym():
            raise self.reject(name, _LINK_REASON.format(kind="symbolic"))
        if member.islnk():
            raise self.reject(name, _LINK_REASON.format(kind="hard"))
        if member.ischr() or member.isblk() or member.isfifo():
            raise self.reject(name, "is a device file or fifo (not allowed)")
        if member.issparse():
            raise self.reject(name, "is a sparse file (not supported)")
        if not (member.isreg() or member.isdir()):
            raise self.reject(name, f"has an unsupported tar entry type {member.type!r}")
        if member.size < 0:
            raise self.reject(name, "has a negative size")
        self.check_size(name, member.size)

    # -- shared checks and writes ------------------------------------------

    def check_count(self, count: int, name: str | None) -> None:
        if count > self.limits.max_entries:
            where = f"; at entry {name!r}" if name is not None else f" ({count} declared)"
            raise ArchiveRejectedError(
                self.shown,
                f"the archive holds more than {self.limits.max_entries} entries (limit){where}",
                entry=name,
            )

    def check_size(self, name: str, size: int, *, measured: bool = False) -> None:
        """``size`` bytes for entry ``name``, as declared or as written so far."""
        limit = self.limits.max_file_bytes
        if size > limit:
            raise self.reject(
                name,
                f"is larger than the limit of {limit} bytes per file (measured while extracting)"
                if measured
                else f"declares {size} bytes, over the limit of {limit} bytes per file",
            )
        if self.total_bytes + size > self.limits.max_total_bytes:
            raise self.reject(
                name,
                f"takes the archive over the limit of {self.limits.max_total_bytes} bytes unpacked"
                " in total",
            )

    def safe_parts(self, name: str) -> tuple[str, ...]:
        if _CONTROL.search(name):
            raise self.reject(name, "contains a control character (not allowed in paths)")
        if "\\" in name:
            raise self.reject(name, "contains a backslash (a Windows separator; use '/')")
        if _DRIVE.match(name):
            raise self.reject(name, "starts with a Windows drive letter (absolute path)")
        if ":" in name:
            raise self.reject(name, "contains ':' (not portable; a drive or stream name)")
        if name.startswith("/"):
            raise self.reject(name, "is an absolute path")
        parts = tuple(part for part in name.split("/") if part not in ("", "."))
        if ".." in parts:
            raise self.reject(name, "escapes the archive root (path traversal)")
        if len(parts) > self.limits.max_depth:
            raise self.reject(
                name, f"is nested deeper than {self.limits.max_depth} folders (limit)"
            )
        if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in parts):
            raise self.reject(name, "has a path component longer than 255 bytes")
        for depth in range(1, len(parts)):
            if parts[:depth] in self.file_parts:
                raise self.reject(name, f"is inside {'/'.join(parts[:depth])!r}, which is a file")
        return parts

    def add_dir(self, name: str) -> None:
        self.entries += 1
        parts = self.safe_parts(name)
        if parts in self.file_parts:
            raise self.reject(name, "is a folder and also a file in the archive")
        self.make_dirs(name, parts, len(parts) + 1)

    def make_dirs(self, name: str, parts: tuple[str, ...], stop: int) -> None:
        for depth in range(1, stop):
            prefix = parts[:depth]
            if prefix in self.dir_parts:
                continue
            try:
                os.mkdir(self.target.joinpath(*prefix), 0o755)
            except OSError as error:
                raise self.reject(name, f"cannot be written: {error.strerror or error}") from None
            self.dir_parts.add(prefix)

    def add_file(self, name: str, member: IO[bytes] | io.BufferedIOBase, mode: int) -> None:
        self.entries += 1
        parts = self.safe_parts(name)
        if not parts:
            raise self.reject(name, "is a file without a name")
        if parts in self.file_parts or parts in self.dir_parts:
            raise self.reject(name, "appears twice in the archive")
        self.make_dirs(name, parts, len(parts))
        path = self.target.joinpath(*parts)
        try:
            fd = os.open(path, _CREATE_FLAGS, 0o600)
        except OSError as error:
            raise self.reject(name, f"cannot be written: {error.strerror or error}") from None
        self.file_parts.add(parts)
        self.files += 1
        with os.fdopen(fd, "wb") as out:
            written = self.copy(name, member, out)
        os.chmod(path, 0o755 if mode & 0o111 else 0o644)
        self.total_bytes += written

    def copy(self, name: str, member: IO[bytes] | io.BufferedIOBase, out: BinaryIO) -> int:
        written = 0
        while True:
            chunk = member.read(CHUNK_BYTES)
            if not chunk:
                return written
            written += len(chunk)
            self.check_size(name, written, measured=True)
            try:
                out.write(chunk)
            except OSError as error:
                raise self.reject(name, f"cannot be written: {error.strerror or error}") from None
