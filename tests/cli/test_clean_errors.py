"""Clean errors instead of tracebacks: folder names that are not UTF-8 in every report format
and in pytest's JUnit XML, ``-o`` paths that cannot be a report file, an invalid regular
expression in ``expect``, an archive holding no skill, a corrupt cache entry, and a cassette or
an upstream answer whose JSON nests too deeply to read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from pytest_agent_skills.cli import main
from pytest_agent_skills.harness import (
    CassetteFormatError,
    HarnessError,
    LoopbackServer,
    ModelError,
    RunSettings,
    Upstream,
    run_conversation,
)
from pytest_agent_skills.harness.cassette import Cassette
from pytest_agent_skills.harness.expect import validate_expect
from pytest_agent_skills.harness.server import HttpAnswer
from pytest_agent_skills.repository import SkillRepository
from pytest_agent_skills.scenario import ScenarioError, parse_scenarios
from pytest_agent_skills.sources import (
    ArchiveRejectedError,
    CacheError,
    SourceOptions,
    resolve_root,
)
from tests.support.harness import SKILLS
from tests.support.skill_files import write_skill
from tests.support.sources import skills_tree, zip_bytes

#: A folder name holding the byte 0xff, which is not UTF-8 (Python reads it as '\udcff').
NOT_UTF8 = os.fsdecode(b"caf\xff")


@pytest.fixture
def odd_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "skills", NOT_UTF8, front="name: cafe\ndescription: Coffee.\n")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_a_folder_name_that_is_not_utf8_gives_a_valid_utf8_report(odd_tree: Path, fmt: str) -> None:
    """Under a UTF-8 locale (strict stdout) every format prints, its bytes valid UTF-8."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "validate", "skills", "--format", fmt],
        cwd=odd_tree,
        env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    report = done.stdout.decode("utf-8")  # strict: raises on a byte that is not UTF-8
    shown = "skills/caf\\xff/SKILL.md"
    if fmt == "json":
        (skill,) = json.loads(report)["skills"]
        assert skill["path"] == "skills/caf\\xff"
        assert [finding["rule"] for finding in skill["findings"]] == ["name-directory"]
    elif fmt == "sarif":
        (result,) = json.loads(report)["runs"][0]["results"]
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location == {"uri": "skills/caf%FF/SKILL.md", "uriBaseId": "%SRCROOT%"}
    elif fmt == "junit":
        cases = ElementTree.fromstring(report).iter("testcase")
        assert {case.get("classname") for case in cases} == {shown}
    else:
        assert f"{shown}:2:" in report or f"file={shown},line=2" in report


def test_pytests_junit_xml_is_written_for_a_skill_in_such_a_folder(odd_tree: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "skills", "--junitxml=r.xml"],
        cwd=odd_tree,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    cases = list(ElementTree.parse(odd_tree / "r.xml").iter("testcase"))
    assert {case.get("classname") for case in cases} == {"skills.caf\\xff.SKILL.md"}
    (failed,) = [case for case in cases if case.find("failure") is not None]
    assert failed.get("name") == "validate"
    assert "FAILED skills/caf\\xff/SKILL.md::validate" in done.stdout


#: Every command that writes one report to ``-o`` (the skill folder given as it takes it).
REPORT_COMMANDS = {
    "validate": ["skills"],
    "audit": ["skills"],
    "tokens": ["skills"],
    "coverage": ["skills"],
    "mutate": ["skills/good"],
}


@pytest.mark.parametrize("command", sorted(REPORT_COMMANDS))
@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("reports", "-o reports: is a folder; give the path of the report file to write"),
        (
            "missing/report.txt",
            "-o missing/report.txt: the folder missing does not exist; create it first",
        ),
    ],
)
def test_an_output_that_cannot_be_a_report_file_is_a_usage_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    output: str,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "skills", "good")
    (tmp_path / "reports").mkdir()
    assert main([command, *REPORT_COMMANDS[command], "-o", output]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"agent-skills {command}: error: {message}"
    assert sorted(os.listdir(tmp_path)) == ["reports", "skills"]  # nothing half-written


@pytest.mark.parametrize("command", ["audit", "coverage", "tokens", "validate"])
def test_a_report_written_to_a_file_replaces_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """``-o`` is a new file renamed over the old one: a reader never sees half a report, and
    nothing is left beside it (mutate writes through the same helper; its run needs
    scenarios)."""
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / "skills", "good")
    (tmp_path / "report.txt").write_text("an older report, longer than the new one\n" * 500)
    old = os.stat(tmp_path / "report.txt").st_ino
    main([command, *REPORT_COMMANDS[command], "-o", "report.txt"])
    written = (tmp_path / "report.txt").read_text(encoding="utf-8")
    assert "an older report" not in written
    assert os.stat(tmp_path / "report.txt").st_ino != old  # a new file renamed over the old
    assert sorted(os.listdir(tmp_path)) == ["report.txt", "skills"]  # no temporary file left


BAD_PATTERN = """\
user: Hi.
model:
  script:
    - say: Hello.
expect:
  final:
    matches: "Hel(lo"
  files:
    - path: out.txt
      matches: "["
"""


def test_an_invalid_regex_in_expect_is_a_scenario_error_at_its_line() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenarios(BAD_PATTERN, Path("greet.scenario.yaml"))
    assert str(caught.value) == (
        "greet.scenario.yaml:7: expect.final.matches: 'Hel(lo' is not a valid regular expression"
        " (missing ), unterminated subpattern at position 3); fix it (Python re syntax), or use"
        " 'contains' for plain text"
    )
    fixed = BAD_PATTERN.replace('"Hel(lo"', '"Hel+o"')
    with pytest.raises(ScenarioError) as caught:
        parse_scenarios(fixed, Path("greet.scenario.yaml"))
    assert str(caught.value).startswith("greet.scenario.yaml:10: expect.files[0].matches: '['")


def test_an_invalid_regex_is_a_collection_error_and_a_literal_matches_key_is_not(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".scenario.yaml", greet=BAD_PATTERN)
    # In call arguments, a mapping with other keys is compared as data: 'matches' is no pattern.
    pytester.makefile(
        ".scenario.yaml",
        literal="""\
        user: Hi.
        model:
          script:
            - say: Hello.
        expect:
          calls: {items: [{name: t, args: {matches: "(", other: 1}}], mode: superset}
        """,
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting greet.scenario.yaml*",
            "*greet.scenario.yaml:7: expect.final.matches: 'Hel(lo' is not a valid regular"
            " expression (missing ), unterminated subpattern at position 3)*",
        ]
    )
    assert "literal.scenario.yaml" not in result.stdout.str().split("short test summary")[-1]
    assert "Traceback" not in result.stdout.str()


def test_an_invalid_regex_given_from_python_is_a_harness_error_before_any_check() -> None:
    with pytest.raises(HarnessError) as caught:
        validate_expect({"calls": {"items": [{"name": "t", "args": {"q": {"matches": "*"}}}]}})
    assert str(caught.value) == (
        "expect.calls.items[0].args.q.matches: '*' is not a valid regular expression (nothing to"
        " repeat at position 0); fix it (Python re syntax), or use 'contains' for plain text"
    )


def test_an_archive_holding_no_skill_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "notes.zip"
    archive.write_bytes(zip_bytes({"notes/README.md": b"# Notes\n"}))
    with pytest.raises(ArchiveRejectedError) as caught:
        resolve_root(archive, options=SourceOptions(cache_dir=tmp_path / "cache"))
    assert str(caught.value) == (
        f"{archive}: the archive holds no SKILL.md, so no skill; link to an archive of skill"
        " folders (each holding a SKILL.md)"
    )


def test_a_ready_cache_entry_that_holds_no_skill_says_the_cache_is_corrupt(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "skills.zip"
    archive.write_bytes(zip_bytes(skills_tree("alpha")))
    options = SourceOptions(cache_dir=tmp_path / "cache")
    entry = resolve_root(archive, options=options)
    shutil.rmtree(entry / "alpha")  # the entry keeps its .ready marker
    with pytest.raises(CacheError) as caught:
        resolve_root(archive, options=options)
    assert str(caught.value) == (
        f"{archive}: the cached copy {entry} is marked ready but holds no skill (no SKILL.md):"
        " the cache is corrupt. Run again with --skills-refresh (agent-skills validate"
        f" --refresh) to fetch it again, or delete {entry}"
    )
    # What the message says works: a refresh in a later run (the entry is older) fills it again.
    marker = json.loads((entry / ".ready").read_text())
    (entry / ".ready").write_text(json.dumps({**marker, "fetched_at": 0}))
    assert (resolve_root(archive, refresh=True, options=options) / "alpha" / "SKILL.md").is_file()


#: JSON that nests past Python's recursion limit: 200 000 bytes, no alias needed.
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_a_cassette_nested_too_deeply_is_a_cassette_error(tmp_path: Path) -> None:
    cassette = tmp_path / "deep.json"
    cassette.write_text(DEEP_JSON)
    with pytest.raises(CassetteFormatError) as caught:
        Cassette.load(cassette)
    assert str(caught.value) == (
        f"{cassette}: not a readable JSON cassette: its arrays or objects nest too deeply to read"
    )


def test_an_upstream_answer_nested_too_deeply_is_a_model_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def deep_answer(method, target, headers, data):
        return HttpAnswer(200, "application/json", DEEP_JSON.encode())

    cassette = tmp_path / "tape.json"
    with LoopbackServer() as upstream, pytest.raises(ModelError) as caught:
        monkeypatch.setattr(upstream, "answer", deep_answer)  # the upstream is this server
        options = RunSettings(record_mode="once", upstream=Upstream(upstream.base_url))
        run_conversation(SkillRepository([SKILLS]), "Hi.", cassette=cassette, settings=options)
    assert str(caught.value) == (
        f"recording {cassette}: upstream {upstream.base_url}/chat/completions answered JSON that"
        f" cannot be read (its arrays or objects nest too deeply to read): {DEEP_JSON[:200]}"
    )
    assert not cassette.exists()


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ('"a\\0b.txt"', "input name must not contain NUL bytes"),
        (
            '"../up.txt"',
            "input name '../up.txt' must name a file inside work/inputs (a relative path without"
            " '..')",
        ),
        (
            "/etc/cron.d/x",
            "input name '/etc/cron.d/x' must name a file inside work/inputs (a relative path"
            " without '..')",
        ),
    ],
)
def test_an_input_name_the_workspace_refuses_is_a_scenario_error_at_its_line(
    name: str, problem: str
) -> None:
    """Refused at collection: at the first run it would only reach the model as a failed
    ``skill_run``, and a scenario that expects nothing of it would pass."""
    text = f'user: Hi.\ninputs:\n  ok.txt: fine\n  {name}: "x"\nmodel: {{script: [{{say: x}}]}}\n'
    with pytest.raises(ScenarioError) as caught:
        parse_scenarios(text, Path("inputs.scenario.yaml"))
    assert str(caught.value) == f"inputs.scenario.yaml:4: inputs: {problem}"


def test_a_nul_byte_in_a_scenario_input_name_is_a_collection_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".scenario.yaml",
        nul='user: Hi.\ninputs:\n  "a\\0b.txt": x\nmodel: {script: [{say: Hello.}]}\n',
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting nul.scenario.yaml*",
            "*nul.scenario.yaml:3: inputs: input name must not contain NUL bytes*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_an_input_name_the_workspace_refuses_is_a_harness_error_before_the_conversation(
    tmp_path: Path,
) -> None:
    """The Python side (``skill_agent.run(inputs=...)``, ``run_conversation``): refused before
    the model is asked anything, not handed to the model as a failed ``skill_run``."""
    script = [{"call": "skill_run", "args": {"skill": "notes", "command": "ls inputs"}}]
    with pytest.raises(HarnessError) as caught:
        run_conversation(
            SkillRepository([SKILLS]),
            "Hi.",
            script=[*script, {"say": "done"}],
            inputs={"ok.txt": "x", "../../escape.txt": "y"},
        )
    assert str(caught.value) == (
        "inputs: input name '../../escape.txt' must name a file inside work/inputs (a relative"
        " path without '..')"
    )
