"""Fuzz: 10,000+ malformed or hostile zip / tar / tar.gz archives through unpacking and the cache.

A seeded generator builds each archive in memory from random entries (safe
and hostile names, links, devices, oversized and bomb-like files) and then
maybe corrupts it (flipped bytes, truncation, lying zip sizes).  Each one is
unpacked through the real cache.  Afterwards: nothing was written outside
the cache, every failure was one of our typed errors, no failed key left an
entry or a temporary folder, and every entry that was made is complete
(marker present, regular files only, within the limits).
"""

from __future__ import annotations

import io
import os
import random
import shutil
import stat
import struct
import tarfile
import tempfile
import warnings
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest

from pytest_agent_skills.sources import Limits, SourceError
from pytest_agent_skills.sources.archive import unpack
from pytest_agent_skills.sources.cache import LOCKS_DIR, READY_FILE, SkillCache, entry_name

ARCHIVES = 10_000
SEED = 20261202
LIMITS = Limits(max_file_bytes=2048, max_total_bytes=8192, max_entries=16, max_depth=5)
SEGMENTS = ["skill", "SKILL.md", "docs", "a", "b", "scripts", "run.sh", ".hidden", "x.txt", "é"]
HOSTILE = [
    "..",
    "../x",
    "../../x",
    "a/../../x",
    "a/..",
    "./a",
    "a//b",
    ".",
    "",
    "/",
    "C:x",
    "c:/x",
    "a\\..\\x",
    "\\x",
    "a:b",
    "a\x00b",
    "a\nb",
    "x" * 300,
    ".ready",
    "top/.ready",
    "a/" * 8 + "f",
]
KINDS = ["file"] * 8 + ["dir", "symlink", "hardlink", "device", "fifo"]


def random_name(rng: random.Random, outside: Path) -> str:
    roll = rng.random()
    if roll < 0.55:
        return "/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 4)))
    if roll < 0.75:
        return rng.choice(HOSTILE)
    if roll < 0.9:
        return "../" * rng.randint(1, 7) + f"outside/evil{rng.randint(0, 9)}"
    if roll < 0.95:
        return f"{outside}/evil{rng.randint(0, 9)}"
    return "".join(rng.choice("ab/.\\:\x00é ~") for _ in range(rng.randint(1, 12)))


def random_data(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.8:
        return rng.randbytes(rng.randint(0, 200))
    if roll < 0.9:
        return b"\0" * rng.randint(2000, 9000)
    return b"---\nname: fuzzed\n---\n" + rng.randbytes(rng.randint(0, 50))


def build_zip(rng: random.Random, outside: Path) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(
            buffer, "w", rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
        ) as zf:
            for _ in range(rng.randint(0, 14)):
                kind = rng.choice(KINDS)
                name = random_name(rng, outside) or "empty"
                info = zipfile.ZipInfo(name + ("/" if kind == "dir" else ""))
                mode = {
                    "symlink": stat.S_IFLNK | 0o777,
                    "fifo": stat.S_IFIFO | 0o644,
                    "device": stat.S_IFCHR | 0o644,
                }.get(kind, stat.S_IFREG | rng.choice([0o644, 0o755, 0o4777]))
                info.external_attr = mode << 16
                zf.writestr(info, b"" if kind == "dir" else random_data(rng))
    data = buffer.getvalue()
    if rng.random() < 0.15 and b"PK\x01\x02" in data:
        data = lie_about_zip_size(data, rng.randint(0, 3000))
    return data


def lie_about_zip_size(data: bytes, size: int) -> bytes:
    patched = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = patched.find(signature)
        if at >= 0:
            patched[at + offset : at + offset + 4] = struct.pack("<I", size)
    return bytes(patched)


TAR_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "device": tarfile.CHRTYPE,
    "fifo": tarfile.FIFOTYPE,
}


def build_tar(rng: random.Random, outside: Path, compressed: bool) -> bytes:
    buffer = io.BytesIO()
    tar_format = rng.choice([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
    options = {"compresslevel": 1} if compressed else {}
    mode = "w:gz" if compressed else "w"
    with tarfile.open(fileobj=buffer, mode=mode, format=tar_format, **options) as archive:
        for _ in range(rng.randint(0, 14)):
            kind = rng.choice(KINDS)
            info = tarfile.TarInfo(random_name(rng, outside))
            info.type = TAR_TYPES[kind]
            info.mode = rng.choice([0o644, 0o755, 0o4777])
            info.linkname = rng.choice(["/etc/passwd", "../../x", "a"]) if "link" in kind else ""
            data = random_data(rng) if kind == "file" else b""
            info.size = len(data)
            try:
                archive.addfile(info, io.BytesIO(data) if data else None)
            except (ValueError, UnicodeError):
                continue  # a name this tar format cannot hold: try the next entry
    return buffer.getvalue()


def corrupt(rng: random.Random, data: bytes) -> bytes:
    roll = rng.random()
    if roll < 0.5 or not data:
        return data
    if roll < 0.7:
        mutable = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutable[rng.randrange(len(mutable))] = rng.randrange(256)
        return bytes(mutable)
    if roll < 0.85:
        return data[: rng.randrange(len(data))]
    at = rng.randrange(len(data))
    return data[:at] + rng.randbytes(rng.randint(1, 64)) + data[at:]


def generate(rng: random.Random, outside: Path) -> tuple[str, bytes]:
    fmt = rng.choice(["zip", "tar", "tar.gz"])
    data = build_zip(rng, outside) if fmt == "zip" else build_tar(rng, outside, fmt == "tar.gz")
    return fmt, corrupt(rng, data)


def check_entry(entry: Path) -> None:
    assert (entry / READY_FILE).is_file(), f"{entry} has no {READY_FILE}"
    total = 0
    for current, dirnames, filenames in os.walk(entry):
        for name in dirnames + filenames:
            mode = os.lstat(os.path.join(current, name)).st_mode
            assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), f"{current}/{name} is not a file"
            assert not mode & (stat.S_ISUID | stat.S_ISGID), f"{current}/{name} is setuid"
        for name in filenames:
            if name != READY_FILE:
                size = os.path.getsize(os.path.join(current, name))
                assert size <= LIMITS.max_file_bytes
                total += size
    assert total <= LIMITS.max_total_bytes


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Path]:
    """An empty folder, in memory (/dev/shm) when there is one: 10,000 fills are I/O bound."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="agent-skills-fuzz-", dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_hostile_archives_never_escape_and_fail_only_with_typed_errors(sandbox: Path):
    outside = sandbox / "outside"
    outside.mkdir()
    cache = SkillCache(sandbox / "cache")
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    unexpected: list[str] = []
    made: set[str] = set()

    for number in range(ARCHIVES):
        fmt, data = generate(rng, outside)
        key = f"fuzz://{number}/archive.{fmt}"

        def fill(staging: Path, data: bytes = data, fmt: str = fmt, key: str = key) -> Path:
            return unpack(
                io.BytesIO(data),
                fmt,
                staging / "unpacked",
                shown=key,
                url_path=PurePosixPath(key),
                limits=LIMITS,
            )

        try:
            cache.get(key, fill, shown=key)
        except SourceError as error:
            outcomes[type(error).__name__] += 1
        except Exception as error:
            unexpected.append(f"#{number} {fmt}: {type(error).__name__}: {error}")
        else:
            outcomes["unpacked"] += 1
            made.add(entry_name(key))

    assert unexpected == [], f"{len(unexpected)} untyped errors, first: {unexpected[:5]}"
    assert sorted(os.listdir(sandbox)) == ["cache", "outside"]
    assert os.listdir(outside) == [], "files were written outside the cache"
    leftovers = set(os.listdir(cache.directory)) - {LOCKS_DIR}
    assert leftovers == made, f"partial or stray cache entries: {sorted(leftovers - made)[:5]}"
    for name in made:
        check_entry(cache.directory / name)
    print(dict(outcomes))
    assert sum(outcomes.values()) == ARCHIVES
    assert outcomes["unpacked"] > 100 and outcomes["ArchiveRejectedError"] > 1000
    assert outcomes["CorruptArchiveError"] > 1000
