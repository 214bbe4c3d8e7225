"""Local paths and file:// roots: folders used in place, archives and SKILL.md files cached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.sources import SourceOptions, UnsupportedRootError, resolve_root
from tests.support.sources import skill_md, skills_tree, tar_bytes, zip_bytes


@pytest.fixture
def options(tmp_path: Path) -> SourceOptions:
    return SourceOptions(cache_dir=tmp_path / "cache")


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "my skills"
    (folder / "alpha").mkdir(parents=True)
    (folder / "alpha" / "SKILL.md").write_bytes(skill_md("alpha"))
    return folder


def test_a_local_folder_is_used_in_place(skills_dir: Path, options: SourceOptions):
    assert resolve_root(skills_dir, options=options) == skills_dir
    assert resolve_root("my skills", base_dir=skills_dir.parent, options=options) == skills_dir
    assert not options.cache_dir.exists()


def test_a_missing_local_path_is_returned_for_the_repository_to_report(tmp_path: Path):
    assert resolve_root(tmp_path / "nowhere") == tmp_path / "nowhere"


@pytest.mark.parametrize("prefix", ["file://", "file://localhost"])
def test_a_file_url_of_a_folder_is_used_in_place(skills_dir: Path, prefix: str):
    url = prefix + skills_dir.as_posix().replace(" ", "%20")
    assert resolve_root(url) == skills_dir


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "file://otherhost/skills",
            "file://otherhost/skills: unsupported file URL host 'otherhost'; a file:// URL must"
            " name a local file (file:///path or file://localhost/path)",
        ),
        (
            "ftp://example.invalid/skills.zip",
            "ftp://example.invalid/skills.zip: unsupported skills root URL scheme 'ftp'; use a"
            " local path, a file:// URL or an http(s):// URL",
        ),
        (
            "https:///skills.zip",
            "https:///skills.zip: the URL has no host; write it as https://host/path",
        ),
        (
            "https://[::1/skills.zip",
            "https://[::1/skills.zip: the URL cannot be parsed (Invalid IPv6 URL); write it as"
            " https://host/path",
        ),
        (
            "ftp://user:secret@example.invalid/skills.zip",
            "ftp://***@example.invalid/skills.zip: unsupported skills root URL scheme 'ftp';"
            " use a local path, a file:// URL or an http(s):// URL",
        ),
        (
            "https://user:secret@[::1/skills.zip",
            "https://***@[::1/skills.zip: the URL cannot be parsed (Invalid IPv6 URL); write it"
            " as https://host/path",
        ),
    ],
)
def test_unsupported_urls_are_typed_errors(spec: str, message: str):
    with pytest.raises(UnsupportedRootError) as caught:
        resolve_root(spec)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("filename", "body"),
    [
        ("skills.zip", zip_bytes(skills_tree("alpha", "beta"))),
        ("skills.tgz", tar_bytes(skills_tree("alpha", "beta"), compressed=True)),
        ("bundle.bin", tar_bytes(skills_tree("alpha", "beta"))),
    ],
    ids=["zip", "tgz", "tar-sniffed"],
)
def test_a_local_archive_is_unpacked_into_the_cache(
    tmp_path: Path, options: SourceOptions, filename: str, body: bytes
):
    archive = tmp_path / filename
    archive.write_bytes(body)
    by_path = resolve_root(archive, options=options)
    by_url = resolve_root(archive.as_uri(), options=options)
    assert by_path == by_url
    assert by_path.parent == options.cache_dir
    assert SkillRepository([by_path]).names() == ["alpha", "beta"]


def test_a_changed_local_archive_is_unpacked_again(tmp_path: Path, options: SourceOptions):
    archive = tmp_path / "skills.zip"
    archive.write_bytes(zip_bytes(skills_tree("old")))
    first = resolve_root(archive, options=options)
    archive.write_bytes(zip_bytes(skills_tree("new", "newer")))
    os.utime(archive, ns=(1, 1))
    second = resolve_root(archive, options=options)
    assert first == second
    assert SkillRepository([second]).names() == ["new", "newer"]


def test_a_local_skill_file_becomes_a_one_skill_root(tmp_path: Path, options: SourceOptions):
    skill_file = tmp_path / "SKILL.md"
    skill_file.write_bytes(skill_md("lonely"))
    root = resolve_root(f"file://{skill_file}", options=options)
    assert sorted(os.listdir(root)) == [".ready", "lonely"]
    assert SkillRepository([root]).names() == ["lonely"]


def test_a_local_file_that_is_no_archive_is_unsupported(tmp_path: Path, options: SourceOptions):
    notes = tmp_path / "notes.txt"
    notes.write_text("just notes\n")
    with pytest.raises(UnsupportedRootError) as caught:
        resolve_root(notes, options=options)
    assert str(caught.value) == (
        f"{notes}: the file is neither an archive (.zip, .tar, .tar.gz, .tgz) nor a SKILL.md;"
        " point the root at a folder, an archive or a SKILL.md"
    )
