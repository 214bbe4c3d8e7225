"""Unpacking skill-root archives: formats, layout, and every rejection (no network here)."""

from __future__ import annotations

import io
import os
import struct
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from pytest_agent_skills.sources import ArchiveRejectedError, CorruptArchiveError, Limits
from pytest_agent_skills.sources.archive import _Extractor, detect_format, skill_folder_name, unpack
from tests.support.sources import TarEntry, skill_md, skills_tree, tar_bytes, tree, zip_bytes

URL = "https://x/skills.zip"
DEFAULT = Limits()
SMALL = Limits(max_file_bytes=1000, max_total_bytes=2500, max_entries=12, max_depth=6)


def unpack_bytes(
    data: bytes,
    fmt: str,
    tmp_path: Path,
    *,
    limits: Limits = DEFAULT,
    url_path: str = "/skills.zip",
) -> Path:
    return unpack(
        io.BytesIO(data),
        fmt,
        tmp_path / "dest",
        shown=URL,
        url_path=PurePosixPath(url_path),
        limits=limits,
    )


def build(fmt: str, entries: dict[str, bytes]) -> bytes:
    if fmt == "zip":
        return zip_bytes(entries)
    return tar_bytes(entries, compressed=fmt == "tar.gz")


FORMATS = ["zip", "tar", "tar.gz"]


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("skills.zip", b"", "zip"),
        ("SKILLS.ZIP", b"", "zip"),
        ("skills.tar.gz", b"", "tar.gz"),
        ("skills.tgz", b"", "tar.gz"),
        ("skills.tar", b"", "tar"),
        ("SKILL.md", b"", "skill-md"),
        ("skill.MD", b"", "skill-md"),
        ("download", b"PK\x03\x04rest", "zip"),
        ("download", b"\x1f\x8b\x08", "tar.gz"),
        ("download", b"\0" * 257 + b"ustar\x0000", "tar"),
        ("download", b"\0" * 257 + b"ustar  \0", "tar"),
        ("weather.md", b"---\nname: weather\n", "skill-md"),
        ("raw", b"\xef\xbb\xbf---\r\nname: x\n", "skill-md"),
        ("download", b"<html>not found</html>", None),
        ("notes.md", b"# Notes\n", None),
    ],
)
def test_format_is_detected_by_name_then_magic_bytes(name: str, head: bytes, expected: str | None):
    assert detect_format(name, head) == expected


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_single_top_level_folder_is_unwrapped(fmt: str, tmp_path: Path):
    root = unpack_bytes(
        build(fmt, skills_tree("alpha", "beta", prefix="repo-main/skills/")), fmt, tmp_path
    )
    assert sorted(os.listdir(root)) == ["skills"]
    assert tree(root)["skills/alpha/SKILL.md"] == skill_md("alpha")
    assert os.stat(root / "skills/beta/scripts/run.sh").st_mode & 0o777 == 0o755
    assert os.stat(root / "skills/beta/SKILL.md").st_mode & 0o777 == 0o644


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_single_folder_that_is_a_skill_stays_a_skill_folder(fmt: str, tmp_path: Path):
    root = unpack_bytes(build(fmt, skills_tree("weather")), fmt, tmp_path)
    assert sorted(tree(root)) == ["weather/SKILL.md", "weather/scripts/run.sh"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_skill_at_the_archive_top_is_moved_into_a_folder_named_after_it(fmt: str, tmp_path: Path):
    entries = {"SKILL.md": skill_md("pdf-tools"), "scripts/run.sh": b"echo\n"}
    root = unpack_bytes(build(fmt, entries), fmt, tmp_path)
    assert sorted(tree(root)) == ["pdf-tools/SKILL.md", "pdf-tools/scripts/run.sh"]


def test_a_bare_skill_file_is_named_after_its_front_matter(tmp_path: Path):
    root = unpack_bytes(skill_md("weather"), "skill-md", tmp_path, url_path="/raw/SKILL.md")
    assert tree(root) == {"weather/SKILL.md": skill_md("weather")}


@pytest.mark.parametrize(
    ("text", "url_path", "expected"),
    [
        ("---\nname: weather\n---\n", "/a/SKILL.md", "weather"),
        ("---\nname: ../evil\n---\n", "/skills/forecast/SKILL.md", "forecast"),
        ("no front matter", "/skills/forecast/SKILL.md", "forecast"),
        ("---\nname: [1, 2]\n---\n", "/pdf.md", "pdf"),
        ("", "/dl/weather-tool.tar.gz", "weather-tool"),
        ("", "/dl/v1.2-tools.zip", "v1.2-tools"),
        ("---\n: bad yaml [\n---\n", "/SKILL.md", "skill"),
    ],
)
def test_a_lone_skill_folder_name_falls_back_to_the_url_stem_or_parent(
    text: str, url_path: str, expected: str
):
    assert skill_folder_name(text, PurePosixPath(url_path)) == expected


REJECTED_NAMES = [
    ("../evil", "entry '../evil' escapes the archive root (path traversal)"),
    ("a/../../evil", "entry 'a/../../evil' escapes the archive root (path traversal)"),
    ("/etc/evil", "entry '/etc/evil' is an absolute path"),
    ("C:evil", "entry 'C:evil' starts with a Windows drive letter (absolute path)"),
    ("c:/evil", "entry 'c:/evil' starts with a Windows drive letter (absolute path)"),
    ("a\\..\\evil", "entry 'a\\\\..\\\\evil' contains a backslash (a Windows separator; use '/')"),
    ("a/b:c", "entry 'a/b:c' contains ':' (not portable; a drive or stream name)"),
    ("a/b\nc", "entry 'a/b\\nc' contains a control character (not allowed in paths)"),
    ("a/" * 7 + "f", f"entry '{'a/' * 7}f' is nested deeper than 6 folders (limit)"),
    ("x" * 256, f"entry '{'x' * 256}' has a path component longer than 255 bytes"),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "message"), REJECTED_NAMES)
def test_unsafe_entry_names_reject_the_archive(fmt: str, name: str, message: str, tmp_path: Path):
    data = build(fmt, {"ok/SKILL.md": skill_md("ok"), name: b"evil"})
    with pytest.raises(ArchiveRejectedError) as caught:
        unpack_bytes(data, fmt, tmp_path, limits=SMALL)
    assert str(caught.value) == f"{URL}: {message}"
    assert caught.value.entry == name
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_entry_below_a_file_is_rejected(fmt: str, tmp_path: Path):
    data = build(fmt, {"a": b"file", "a/b": b"below"})
    with pytest.raises(ArchiveRejectedError, match=r"entry 'a/b' is inside 'a', which is a file$"):
        unpack_bytes(data, fmt, tmp_path)


@pytest.mark.parametrize("fmt", ["tar", "tar.gz"])
def test_a_duplicated_entry_is_rejected(fmt: str, tmp_path: Path):
    data = tar_bytes(
        [TarEntry("s/SKILL.md", b"one"), TarEntry("s/SKILL.md", b"two")], compressed=fmt == "tar.gz"
    )
    with pytest.raises(
        ArchiveRejectedError, match=r"entry 's/SKILL.md' appears twice in the archive$"
    ):
        unpack_bytes(data, fmt, tmp_path)


def test_zip_symlink_entries_are_rejected_not_written_as_files(tmp_path: Path):
    data = zip_bytes(skills_tree("ok"), links={"ok/passwd": "/etc/passwd"})
    with pytest.raises(ArchiveRejectedError) as caught:
        unpack_bytes(data, "zip", tmp_path)
    assert str(caught.value) == (
        f"{URL}: entry 'ok/passwd' is a symbolic link (links are not allowed in skill archives)"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            TarEntry("s/link", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
            "entry 's/link' is a symbolic link (links are not allowed in skill archives)",
        ),
        (
            TarEntry("s/hard", type=tarfile.LNKTYPE, linkname="s/SKILL.md"),
            "entry 's/hard' is a hard link (links are not allowed in skill archives)",
        ),
        (
            TarEntry("s/tty", type=tarfile.CHRTYPE),
            "entry 's/tty' is a device file or fifo (not allowed)",
        ),
        (
            TarEntry("s/disk", type=tarfile.BLKTYPE),
            "entry 's/disk' is a device file or fifo (not allowed)",
        ),
        (
            TarEntry("s/pipe", type=tarfile.FIFOTYPE),
            "entry 's/pipe' is a device file or fifo (not allowed)",
        ),
    ],
)
@pytest.mark.parametrize("compressed", [False, True])
def test_tar_links_and_devices_reject_the_whole_archive(
    entry: TarEntry, message: str, compressed: bool, tmp_path: Path
):
    data = tar_bytes([TarEntry("s/SKILL.md", skill_md("s")), entry], compressed=compressed)
    with pytest.raises(ArchiveRejectedError) as caught:
        unpack_bytes(data, "tar.gz" if compressed else "tar", tmp_path)
    assert str(caught.value) == f"{URL}: {message}"


def test_zip_device_and_fifo_entries_are_rejected(tmp_path: Path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("s/pipe")
        info.external_attr = 0o010644 << 16
        archive.writestr(info, b"")
    with pytest.raises(
        ArchiveRejectedError, match=r"entry 's/pipe' is a device file, fifo or socket"
    ):
        unpack_bytes(buffer.getvalue(), "zip", tmp_path)


def test_encrypted_zip_entries_are_rejected(tmp_path: Path):
    data = bytearray(zip_bytes({"s/SKILL.md": b"secret"}))
    for signature, flag_offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature) + flag_offset
        data[at] |= 0x1
    with pytest.raises(ArchiveRejectedError, match=r"entry 's/SKILL.md' is encrypted"):
        unpack_bytes(bytes(data), "zip", tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_over_the_per_file_limit_is_rejected(fmt: str, tmp_path: Path):
    data = build(fmt, {"s/SKILL.md": skill_md("s"), "s/big.bin": b"\0" * 1001})
    with pytest.raises(ArchiveRejectedError) as caught:
        unpack_bytes(data, fmt, tmp_path, limits=SMALL)
    assert str(caught.value) == (
        f"{URL}: entry 's/big.bin' declares 1001 bytes, over the limit of 1000 bytes per file"
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_files_over_the_total_limit_are_rejected(fmt: str, tmp_path: Path):
    entries = {f"s/part{i}.bin": b"\0" * 900 for i in range(3)}
    with pytest.raises(ArchiveRejectedError) as caught:
        unpack_bytes(build(fmt, entries), fmt, tmp_path, limits=SMALL)
    assert str(caught.value) == (
        f"{URL}: entry 's/part2.bin' takes the archive over the limit of 2500 bytes unpacked in"
        " total"
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_too_many_entries_are_rejected(fmt: str, tmp_path: Path):
    entries = {f"s/f{i:02}.txt": b"x" for i in range(13)}
    with pytest.raises(ArchiveRejectedError) as caught:
        unpack_bytes(build(fmt, entries), fmt, tmp_path, limits=SMALL)
    where = " (13 declared)" if fmt == "zip" else "; at entry 's/f12.txt'"
    assert str(caught.value) == f"{URL}: the archive holds more than 12 entries (limit){where}"
    if fmt == "zip":  # the zip's end record is read first: nothing was written
        assert os.listdir(tmp_path / "dest/raw") == []


def _lie_about_size(data: bytes, size: int) -> bytes:
    """Rewrite the uncompressed size of the first entry in both zip headers."""
    patched = bytearray(data)
    for signature, size_offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = patched.index(signature) + size_offset
        patched[at : at + 4] = struct.pack("<I", size)
    return bytes(patched)


def test_a_zip_that_lies_about_its_sizes_is_stopped(tmp_path: Path):
    honest = zip_bytes({"s/bomb.bin": b"\0" * (4 * 1024 * 1024)})
    lying = _lie_about_size(honest, 500)
    with pytest.raises(CorruptArchiveError) as caught:
        unpack_bytes(lying, "zip", tmp_path, limits=SMALL)
    assert str(caught.value) == (
        f"{URL}: entry 's/bomb.bin' does not match its recorded size or checksum (the archive is"
        " corrupt or lies about its sizes)"
    )
    written = tmp_path / "dest/raw/s/bomb.bin"
    assert written.stat().st_size <= 500


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("zip", b"PK\x03\x04 this is no zip at all"),
        ("zip", zip_bytes(skills_tree("s"))[:-30]),
        ("tar.gz", tar_bytes(skills_tree("s"), compressed=True)[:-40]),
        ("tar.gz", b"\x1f\x8b\x08\x00garbage"),
        ("tar", b"\x01" * 700),
    ],
    ids=["zip-not-a-zip", "zip-truncated", "tar.gz-truncated", "tar.gz-bad-stream", "tar-junk"],
)
def test_malformed_archives_raise_one_typed_error(fmt: str, data: bytes, tmp_path: Path):
    with pytest.raises(
        CorruptArchiveError, match=r"^https://x/skills.zip: the archive is corrupt or truncated"
    ):
        unpack_bytes(data, fmt, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_archive_without_files_is_rejected(fmt: str, tmp_path: Path):
    data = (
        zip_bytes({})
        if fmt == "zip"
        else tar_bytes([TarEntry("empty/", type=tarfile.DIRTYPE)], compressed=fmt == "tar.gz")
    )
    with pytest.raises(
        ArchiveRejectedError, match=r"the archive holds no files; it cannot hold a skill$"
    ):
        unpack_bytes(data, fmt, tmp_path)


def test_the_cache_marker_name_is_reserved(tmp_path: Path):
    data = zip_bytes({"top/.ready": b"fake", "top/s/SKILL.md": skill_md("s")})
    with pytest.raises(ArchiveRejectedError, match=r"entry '.ready' uses the name reserved"):
        unpack_bytes(data, "zip", tmp_path)


def test_a_bare_skill_file_over_the_per_file_limit_is_rejected(tmp_path: Path):
    with pytest.raises(
        ArchiveRejectedError, match=r"the SKILL.md is larger than the limit of 1000 bytes"
    ):
        unpack_bytes(b"---\n" + b"x" * 1000, "skill-md", tmp_path, limits=SMALL)


def test_bytes_are_measured_while_written_whatever_the_reader_declares(tmp_path: Path):
    # zipfile and tarfile never yield more than declared; this guards any reader that would.
    extractor = _Extractor(tmp_path, URL, SMALL)
    with pytest.raises(ArchiveRejectedError) as caught:
        extractor.add_file("s/big.bin", io.BytesIO(b"\0" * 1500), 0o644)
    assert str(caught.value) == (
        f"{URL}: entry 's/big.bin' is larger than the limit of 1000 bytes per file (measured"
        " while extracting)"
    )
    assert (tmp_path / "s/big.bin").stat().st_size == 0
