"""Hostile files in a skill: links out of the skill folder, named pipes, devices, huge sparse
files and unreadable files are refused with a finding naming the file, never read or quoted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agent_skills.files import (
    MAX_SKILL_FILE_BYTES,
    FileTooLargeError,
    NotRegularFileError,
    OutsideFolderError,
    read_limited,
)
from pytest_agent_skills.protocol import SkillSession
from pytest_agent_skills.protocol.prompt import loaded_skill_text
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.rules import validate
from pytest_agent_skills.skill import Skill
from tests.support.skill_files import write_linked_docs_skill, write_skill

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG"
LINKED_DOC = "Read [the guide](references/guide.md) first.\n"
NOT_FOLLOWED = (
    "is a symbolic link to a file outside the skill folder; it is not followed (only the skill"
    " folder is staged for the agent). Replace the link with a copy of the file."
)
TAIL = (
    "it is not followed (only the skill folder is staged for the agent). Replace the link with a"
    " copy of the file."
)
FIFO = (
    "is a named pipe (FIFO), not a regular file; only regular files are read. Replace it with a"
    " regular file."
)


def agent_skills(*args: str, cwd: Path, privileged: bool = True) -> subprocess.CompletedProcess:
    """``agent-skills ARGS`` as a real process; a hang is a failure, not a stuck test run."""
    return python_module("pytest_agent_skills.cli", *args, cwd=cwd, privileged=privileged)


def pytest_on_skills(
    *args: str, cwd: Path, privileged: bool = True
) -> subprocess.CompletedProcess:
    """``pytest skills ARGS`` (collecting the SKILL.md files) as a real process."""
    return python_module(
        "pytest", "-p", "no:cacheprovider", "skills", *args, cwd=cwd, privileged=privileged
    )


def python_module(
    module: str, *args: str, cwd: Path, privileged: bool
) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(
        unprivileged(command) if not privileged else command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def unprivileged(command: list[str]) -> list[str]:
    """``command`` run without the power to read any file (root drops its capabilities)."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", *command]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "credentials"
    path.parent.mkdir()
    path.write_text(f"{SECRET}\n")
    return path


def findings(skill_dir: Path) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.message) for f in validate(Skill.load(skill_dir))]


def test_a_skill_md_linked_outside_the_skill_is_not_read_nor_quoted(
    tmp_path: Path, secret: Path
) -> None:
    skill = tmp_path / "skills" / "leak"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").symlink_to(secret)
    assert findings(skill) == [("skill-md-unreadable", None, f"SKILL.md {NOT_FOLLOWED}")]
    done = agent_skills("validate", "skills/leak", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"skills/leak/SKILL.md: error [skill-md-unreadable] SKILL.md {NOT_FOLLOWED}"
    )
    assert "wJalr" not in done.stdout + done.stderr
    collected = pytest_on_skills(cwd=tmp_path)
    assert collected.returncode == 1, collected.stdout + collected.stderr
    assert (
        f"skills/leak/SKILL.md: error [skill-md-unreadable] SKILL.md {NOT_FOLLOWED}"
        in collected.stdout.splitlines()
    )
    assert "wJalr" not in collected.stdout + collected.stderr


def test_links_that_stay_in_the_skill_folder_are_read(tmp_path: Path) -> None:
    """False-positive guard: a SKILL.md linked to a file of its own folder, a skill folder that
    is itself a link (.claude/skills/x -> ../../skills/x) and a doc linked inside are fine."""
    real = write_skill(tmp_path / "skills", "real", body=LINKED_DOC, files={"guide.md": "Guide."})
    (real / "references").mkdir()
    (real / "references" / "guide.md").symlink_to(real / "guide.md")
    (real / "SKILL.md").rename(real / "main.md")
    (real / "SKILL.md").symlink_to("main.md")
    linked = tmp_path / ".claude" / "skills" / "real"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(real)
    assert findings(real) == []
    assert findings(linked) == []


@pytest.mark.parametrize(
    ("body", "relative"),
    [(LINKED_DOC, "references/guide.md"), ("Run `python scripts/run.py`.\n", "scripts/run.py")],
    ids=["doc", "script"],
)
def test_a_file_linked_outside_the_skill_is_a_reference_outside_not_followed(
    tmp_path: Path, secret: Path, body: str, relative: str
) -> None:
    skill = write_skill(tmp_path, "leaky", body=body)
    (skill / relative).parent.mkdir()
    (skill / relative).symlink_to(secret)
    assert findings(skill) == [
        (
            "reference-outside",
            5,
            f"the body refers to {relative!r}, a symbolic link to a file outside the skill"
            f" folder; {TAIL}",
        )
    ]
    with pytest.raises(OutsideFolderError):
        Skill.load(skill).read_text(relative)


def test_a_folder_linked_inside_the_skill_is_followed(tmp_path: Path) -> None:
    """A link to a folder of the skill is one more way into the skill: its docs are read (and
    their own links checked) like any other."""
    body = "Read [a](alias/a.md), then scripts/run.py.\n"
    files = {"real/a.md": "Then [b](b.md).\n", "real/b.md": "B.\n", "real/run.py": ""}
    skill = write_skill(tmp_path, "aliased", body=body, files=files)
    (skill / "alias").symlink_to("real", target_is_directory=True)
    (skill / "scripts").symlink_to("real", target_is_directory=True)
    assert findings(skill) == [
        (
            "reference-nested",
            5,
            "'alias/a.md' refers on to 'alias/b.md', which SKILL.md does not link; keep references"
            " one level deep: link it from SKILL.md too.",
        )
    ]
    assert Skill.load(skill).read_text("alias/a.md") == "Then [b](b.md).\n"
    with pytest.raises(FileNotFoundError):  # a file where a folder should be: still missing
        Skill.load(skill).read_text("alias/a.md/c.md")


def test_a_docs_folder_linked_to_a_sibling_inside_the_skill_validates_clean(
    tmp_path: Path,
) -> None:
    """The realistic false-positive case: ``docs -> shared/docs`` and ``references ->
    ../style-guide/shared/refs`` are two more names for folders of the skill.  Nothing is
    missing, unreadable or outside, and the doc's link to ``checklist.md`` (``docs/checklist.md``)
    is the file SKILL.md links as ``shared/docs/checklist.md``: not a nested reference."""
    skill = write_linked_docs_skill(tmp_path / "skills")
    assert findings(skill) == []
    assert Skill.load(skill).read_text("docs/guide.md").startswith("# Guide")
    done = agent_skills("validate", "skills/style-guide", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "1 skill(s) checked: 0 error(s), 0 warning(s); 0 skill(s) failed"
    ]


def test_a_doc_reached_under_two_names_is_nested_only_when_skill_md_links_neither(
    tmp_path: Path,
) -> None:
    """Through a linked folder the doc's further link has two names; SKILL.md linking the file
    under either settles it, and one linking neither is still reported (under the doc's name)."""
    skill = write_linked_docs_skill(tmp_path)
    write_skill(tmp_path, "style-guide", body="Read [the guide](docs/guide.md).\n")
    assert findings(skill) == [
        (
            "reference-nested",
            5,
            "'docs/guide.md' refers on to 'docs/checklist.md', which SKILL.md does not link; keep"
            " references one level deep: link it from SKILL.md too.",
        )
    ]


#: The end of every finding about a path that leads out of the skill through a linked folder.
THROUGH_FOLDER = (
    "reached through a symbolic link to a folder outside the skill folder; it is not followed"
    " (only the skill folder is staged for the agent). Replace the link with a copy of the"
    " folder."
)


def test_a_folder_linked_outside_the_skill_is_not_followed(tmp_path: Path, secret: Path) -> None:
    (secret.parent / "s.md").write_text(f"{SECRET}\n[more](more.md)\n")
    (secret.parent / "run.py").write_text(f"# {SECRET}\n")
    body = "Read [s](ext/s.md).\nRun `python ext/run.py`.\nOr browse [all of it](ext/).\n"
    skill = write_skill(tmp_path / "skills", "outward", body=body)
    (skill / "ext").symlink_to("../../outside", target_is_directory=True)
    assert findings(skill) == [
        ("reference-outside", 5, f"the body refers to 'ext/s.md', {THROUGH_FOLDER}"),
        ("reference-outside", 6, f"the body refers to 'ext/run.py', {THROUGH_FOLDER}"),
        (
            "reference-outside",
            7,
            "the body refers to 'ext/', a symbolic link to a folder outside the skill folder; it"
            " is not followed (only the skill folder is staged for the agent). Replace the link"
            " with a copy of the folder.",
        ),
    ]
    with pytest.raises(OutsideFolderError) as caught:
        Skill.load(skill).read_text("ext/s.md")
    assert caught.value.reason == f"is {THROUGH_FOLDER}"
    done = agent_skills("validate", "skills/outward", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # reference-outside is a warning
    assert "wJalr" not in done.stdout + done.stderr

def test_a_named_pipe_linked_from_skill_md_does_not_hang_validation(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skills", "piped", body=LINKED_DOC)
    (skill / "references").mkdir()
    os.mkfifo(skill / "references" / "guide.md")
    done = agent_skills("validate", "skills/piped", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == (
        "skills/piped/SKILL.md:5: error [reference-unreadable] the body refers to"
        f" 'references/guide.md', which {FIFO}"
    )
    collected = pytest_on_skills(cwd=tmp_path)
    assert collected.returncode == 1, collected.stdout + collected.stderr
    assert done.stdout.splitlines()[0] in collected.stdout.splitlines()
    # Loading the doc into the prompt says why there is no text instead of blocking.
    text = loaded_skill_text(Skill.load(skill), ["references/guide.md"], [])
    assert f"[Doc] references/guide.md\n\n(not shown: references/guide.md {FIFO})" in text


def test_a_doc_linked_to_dev_zero_is_never_read(tmp_path: Path) -> None:
    """Neither by validation (CLI and pytest collection) nor when the doc is loaded for the
    model: an endless file would be read whole (MemoryError) or forever."""
    skill = write_skill(tmp_path / "skills", "zero", body=LINKED_DOC)
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").symlink_to("/dev/zero")
    outside = (
        "skills/zero/SKILL.md:5: warning [reference-outside] the body refers to"
        f" 'references/guide.md', a symbolic link to a file outside the skill folder; {TAIL}"
    )
    done = agent_skills("validate", "skills", cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, outside), done.stderr
    collected = pytest_on_skills(cwd=tmp_path)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert "[reference-outside] the body refers to 'references/guide.md'" in collected.stdout
    with pytest.raises(OutsideFolderError):
        Skill.load(skill).read_text("references/guide.md")
    # Not a file of the skill for the model either (only the skill folder is staged).
    text = loaded_skill_text(Skill.load(skill), ["references/guide.md"], [])
    assert "[Doc] references/guide.md" not in text


def test_a_huge_sparse_doc_is_refused_from_its_size(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "sparse", body=LINKED_DOC)
    (skill / "references").mkdir()
    with open(skill / "references" / "guide.md", "wb") as handle:
        handle.truncate(3 * 1024**3)
    assert findings(skill) == [
        (
            "reference-unreadable",
            5,
            "the body refers to 'references/guide.md', which is 3221225472 bytes, over the limit"
            " of 4194304 bytes (4 MiB) for a skill file; make it smaller (split it into several"
            " files).",
        )
    ]


def test_a_skill_md_at_the_size_cap_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "big")
    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text + "x" * (MAX_SKILL_FILE_BYTES - len(text)))
    assert Skill.load(skill).name == "big"
    with open(skill / "SKILL.md", "a") as handle:
        handle.write("x")
    (problem,) = Skill.load(skill).problems
    assert (problem.rule, problem.message) == (
        "skill-md-unreadable",
        "SKILL.md is 4194305 bytes, over the limit of 4194304 bytes (4 MiB) for a skill file;"
        " make it smaller (split it into several files).",
    )


def test_devices_are_never_opened() -> None:
    with pytest.raises(NotRegularFileError) as caught:
        read_limited("/dev/zero", limit=10)
    assert str(caught.value) == (
        "/dev/zero: is a character device, not a regular file; only regular files are read."
        " Replace it with a regular file."
    )
    with pytest.raises(FileTooLargeError):
        read_limited("/proc/self/exe", limit=10)


@pytest.fixture
def unreadable_skill(tmp_path: Path) -> Path:
    skill = write_skill(tmp_path / "skills", "locked")
    (skill / "SKILL.md").chmod(0)
    return skill


def test_an_unreadable_skill_md_is_a_finding_for_the_cli(
    tmp_path: Path, unreadable_skill: Path
) -> None:
    done = agent_skills(
        "validate", "skills/locked", "--format", "json", cwd=tmp_path, privileged=False
    )
    assert done.returncode == 1, done.stderr
    (skill,) = json.loads(done.stdout)["skills"]
    assert skill["findings"] == [
        {
            "rule": "skill-md-unreadable",
            "severity": "error",
            "message": "SKILL.md cannot be read (Permission denied); make it readable by the user"
            " running the tests.",
            "line": None,
        }
    ]


def test_an_unreadable_skill_md_fails_its_pytest_item_cleanly(
    tmp_path: Path, unreadable_skill: Path
) -> None:
    done = pytest_on_skills("-rf", cwd=tmp_path, privileged=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout
    assert (
        "skills/locked/SKILL.md: error [skill-md-unreadable] SKILL.md cannot be read (Permission"
        " denied); make it readable by the user running the tests."
    ) in done.stdout.splitlines()
    assert "1 failed in" in done.stdout.splitlines()[-1]  # one item per skill


def test_an_unreadable_doc_is_a_finding_for_the_cli(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skills", "locked-doc", body=LINKED_DOC)
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text("Guide.\n")
    (skill / "references" / "guide.md").chmod(0)
    done = agent_skills("validate", "skills/locked-doc", cwd=tmp_path, privileged=False)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == (
        "skills/locked-doc/SKILL.md:5: error [reference-unreadable] the body refers to"
        " 'references/guide.md', which cannot be read (Permission denied); make it readable by"
        " the user running the tests."
    )


def test_the_protocol_reads_docs_of_linked_folders_only_inside_the_skill(
    tmp_path: Path, secret: Path
) -> None:
    """A model sees the docs of a folder linked inside the skill, listed under their real paths
    (as the reference lists them) and selected under the names SKILL.md uses too; nothing of a
    folder linked outside, even when it asks for all."""
    (secret.parent / "s.md").write_text(f"{SECRET}\n")
    outward = write_skill(tmp_path / "skills", "outward", body="Read [s](ext/s.md).\n")
    (outward / "ext").symlink_to("../../outside", target_is_directory=True)
    write_linked_docs_skill(tmp_path / "skills")
    session = SkillSession(SkillRepository([tmp_path / "skills"]))

    assert session.call("skill_list_docs", {"skill_name": "outward"}).result == []
    assert session.call("skill_list_docs", {"skill_name": "style-guide"}).result == [
        "shared/docs/checklist.md",
        "shared/docs/guide.md",
        "shared/docs/lint.py",
        "shared/refs/api.md",
    ]
    refused = session.call("skill_load", {"skill_name": "outward", "docs": ["ext/s.md"]})
    assert refused.result["error"] == "unknown_doc"
    loaded = session.call("skill_load", {"skill_name": "outward", "include_all_docs": True})
    assert not loaded.is_error, loaded.result
    loaded = session.call("skill_load", {"skill_name": "style-guide", "docs": ["docs/guide.md"]})
    assert not loaded.is_error, loaded.result
    selected = session.call(
        "skill_select_docs",
        {"skill_name": "style-guide", "docs": ["references/api.md"], "mode": "add"},
    )
    assert selected.result["selected_docs"] == ["docs/guide.md", "references/api.md"]
    system = session.build_request([]).system
    assert "Docs loaded: docs/guide.md, references/api.md\n" in system
    assert "[Doc] shared/docs/guide.md\n\n# Guide\n" in system
    assert "[Doc] shared/refs/api.md\n\n# API\n" in system
    assert "wJalr" not in system
