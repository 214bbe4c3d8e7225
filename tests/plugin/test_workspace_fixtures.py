"""The ``skill_workspace`` fixture, its settings, marker, failure report and expected files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.workspace import get_runtime, make_skill


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    make_skill(pytester.path / "skills")
    work_root = pytester.path / "work-root"
    work_root.mkdir()
    pytester.makeini(
        textwrap.dedent(
            f"""\
            [pytest]
            skills_roots = skills
            skills_work_root = {work_root}
            skills_validate = false
            """
        )
    )
    return pytester


def _workspaces(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / "work-root").glob("ws_*"))


def test_factory_runs_a_skill_and_asserts_on_outputs(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_report(skill_workspace):
            ws = skill_workspace("demo", inputs={"data.csv": "a,b\\n1,2\\n"})
            result = ws.run(
                "bash scripts/hello.sh you > out/greeting.txt; wc -l < inputs/data.csv > out/n.txt",
                output_files=["out/*.txt"],
            )
            assert result.exit_code == 0
            assert [f.name for f in result.output_files] == ["out/greeting.txt", "out/n.txt"]
            assert ws.runtime == "local"
            assert ws.out_dir == ws.path / "out" and ws.work_dir == ws.path / "work"
            ws.assert_output_exists("out/greeting.txt")
            ws.assert_output_contains("out/greeting.txt", "hello you")
            assert ws.assert_output_matches("out/n.txt", r"^(\\d+)$").group(1) == "2"
        """
    )

    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert _workspaces(project) == []


@pytest.mark.parametrize(
    ("commands", "lines"),
    [
        pytest.param(
            'ws.run("echo out-line; echo err-line >&2; exit 3")',
            [
                "last run: exit_code=3 timed_out=false duration_ms=*",
                "--- stdout ---",
                "out-line",
                "--- stderr ---",
                "err-line",
            ],
            id="run",
        ),
        pytest.param(
            'session = ws.exec("echo Name:; read name");'
            ' assert session.poll(60000).output == "Name:\\n"',
            [
                "exec session 00000000-0000-4000-8000-000000000001:"
                " 'echo Name:; read name' (running)"
            ],
            id="exec",
        ),
    ],
)
def test_failing_test_reports_the_workspace_and_its_commands(
    project: pytest.Pytester, commands: str, lines: list[str]
) -> None:
    project.makepyfile(
        f"""
        def test_fails(skill_workspace):
            ws = skill_workspace("demo")
            {commands}
            assert False
        """
    )

    result = project.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- agent-skills workspace demo -*",
            "runtime: local",
            "workspace: */work-root/ws_test_fails_* (removed after the test;"
            " keep it with --skills-keep-workspaces)",
            *lines,
        ]
    )
    result.stdout.no_fnmatch_line("no command was run")


def test_the_failure_report_hook_joins_with_the_first_workspace_fixture(
    project: pytest.Pytester,
) -> None:
    # Tests that use no workspace (skill checks, a suite's plain tests) do not pay for the hook.
    project.makepyfile(
        """
        NAME = "agent-skills-workspace-report"

        def test_plain(request):
            assert not request.config.pluginmanager.has_plugin(NAME)

        def test_with_a_workspace(skill_workspace, request):
            assert request.config.pluginmanager.has_plugin(NAME)

        def test_fails_later(skill_workspace):
            skill_workspace("demo").run("echo second")
            assert False
        """
    )

    result = project.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*- agent-skills workspace demo -*", "second"])


def test_keep_workspaces_flag(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_keep(skill_workspace):
            skill_workspace("demo").run("echo kept > out/k.txt")
        """
    )

    project.runpytest("-p", "no:cacheprovider", "--skills-keep-workspaces").assert_outcomes(
        passed=1
    )

    (kept,) = _workspaces(project)
    assert (kept / "out" / "k.txt").read_text() == "kept\n"


def test_expected_files_are_compared_and_updated(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(
        """
        import os

        def test_expected(skill_workspace):
            ws = skill_workspace("demo")
            ws.run(f"echo {os.environ['GREETING']} > out/g.txt")
            ws.assert_output_matches_expected("out/g.txt", "expected/g.txt")
        """
    )
    monkeypatch.setenv("GREETING", "hello")
    expected = project.path / "expected" / "g.txt"

    missing = project.runpytest("-p", "no:cacheprovider")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(
        [
            f"E*AssertionError: expected file {expected} does not exist (for output 'out/g.txt');"
            " run pytest with --skills-update-expected to create it from this output"
        ]
    )

    created = project.runpytest("-p", "no:cacheprovider", "--skills-update-expected")
    created.assert_outcomes(passed=1)
    created.stdout.fnmatch_lines(
        ["created: expected/g.txt", "1 expected files created, 0 updated, 0 unused"]
    )
    assert expected.read_text() == "hello\n"
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

    monkeypatch.setenv("GREETING", "changed")
    differs = project.runpytest("-p", "no:cacheprovider")
    differs.assert_outcomes(failed=1)
    differs.stdout.fnmatch_lines(
        [
            "E*AssertionError: output file 'out/g.txt' differs from the expected file *g.txt"
            " (run pytest with --skills-update-expected to accept the new output):",
            "E*-hello",
            "E*+changed",
        ]
    )
    updated = project.runpytest("-p", "no:cacheprovider", "--skills-update-expected")
    updated.stdout.fnmatch_lines(
        ["updated: expected/g.txt", "0 expected files created, 1 updated, 0 unused"]
    )
    assert expected.read_text() == "changed\n"


UNUSED_TESTS = """
def test_one(skill_workspace):
    ws = skill_workspace("demo")
    ws.run("echo one > out/one.txt")
    ws.assert_output_matches_expected("out/one.txt", "expected/one.txt")

def test_two(skill_workspace):
    ws = skill_workspace("demo")
    ws.run("echo two > out/two.txt")
    ws.assert_output_matches_expected("out/two.txt", "expected/sub/two.txt")
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_expected_files_no_test_used_are_reported(
    project: pytest.Pytester, workers: list[str]
) -> None:
    project.makepyfile(test_unused=UNUSED_TESTS)
    expected = project.path / "expected"
    (expected / "sub").mkdir(parents=True)
    (expected / "one.txt").write_text("one\n")
    (expected / "sub" / "two.txt").write_text("two\n")
    (expected / "old.txt").write_text("a test that was removed\n")
    (expected / "sub" / "older.txt").write_text("another\n")
    args = ["-p", "no:cacheprovider", "--skills-update-expected", *workers]
    result = project.runpytest_subprocess(*args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- agent-skills expected files -*",
            "unused: expected/old.txt",
            "unused: expected/sub/older.txt",
            "0 expected files created, 0 updated, 2 unused (no test compared an output with"
            " them: delete them, or compare)",
        ]
    )
    assert (expected / "old.txt").exists()  # reported, never deleted
    narrowed = project.runpytest_subprocess(*args, "-k", "one")
    narrowed.assert_outcomes(passed=1)
    narrowed.stdout.fnmatch_lines(
        [
            "0 expected files created, 0 updated; unused expected files are looked for only"
            " after a run of every test that passed (no path, -k, -m or failure)"
        ]
    )
    assert "unused:" not in narrowed.stdout.str()
    plain = project.runpytest_subprocess("-p", "no:cacheprovider", *workers)
    assert "expected files" not in plain.stdout.str()  # reported under update only


def test_an_expected_file_outside_the_test_folder_makes_no_file_above_it_unused(
    project: pytest.Pytester,
) -> None:
    tests = project.path / "tests"
    tests.mkdir()
    (tests / "test_shared.py").write_text(
        textwrap.dedent(
            """
            def test_one(skill_workspace):
                ws = skill_workspace("demo")
                ws.run("echo one > out/one.txt")
                ws.assert_output_matches_expected("out/one.txt", "../shared/one.txt")
                ws.assert_output_matches_expected("out/one.txt", "expected/one.txt")
            """
        )
    )
    (project.path / "shared").mkdir()
    (project.path / "shared" / "one.txt").write_text("one\n")
    (tests / "expected").mkdir()
    (tests / "expected" / "one.txt").write_text("one\n")
    (tests / "expected" / "old.txt").write_text("a test that was removed\n")
    result = project.runpytest("-p", "no:cacheprovider", "--skills-update-expected")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- agent-skills expected files -*",
            "unused: tests/expected/old.txt",
            "0 expected files created, 0 updated, 1 unused (no test compared an output with"
            " them: delete them, or compare)",
        ]
    )
    assert "unused: tox.ini" not in result.stdout.str()


def test_a_folder_holding_test_modules_is_not_searched_for_unused_files(
    project: pytest.Pytester,
) -> None:
    tests = project.path / "tests"
    tests.mkdir()
    (tests / "test_other.py").write_text("def test_other():\n    pass\n")
    (tests / "one.txt").write_text("one\n")
    project.makepyfile(
        test_root="""
        def test_one(skill_workspace):
            ws = skill_workspace("demo")
            ws.run("echo one > out/one.txt")
            ws.assert_output_matches_expected("out/one.txt", "tests/one.txt")
        """
    )
    result = project.runpytest("-p", "no:cacheprovider", "--skills-update-expected")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- agent-skills expected files -*",
            "not searched for unused files: tests/ (it holds test modules; keep expected files"
            " in a folder of their own)",
            "0 expected files created, 0 updated, 0 unused",
        ]
    )
    assert "unused: tests/test_other.py" not in result.stdout.str()


def test_marker_chooses_the_runtime(project: pytest.Pytester) -> None:
    get_runtime("sandbox", project.path)  # skips (fails in CI) without bubblewrap
    project.makepyfile(
        """
        import pytest

        @pytest.mark.skills_runtime("sandbox")
        def test_sandboxed(skill_workspace):
            ws = skill_workspace("demo")
            assert ws.runtime == "sandbox"
            assert ws.run("echo x > /usr/evil").exit_code != 0

        def test_argument_wins(skill_workspace):
            assert skill_workspace("demo", runtime="sandbox").runtime == "sandbox"

        @pytest.mark.skills_runtime("vm")
        def test_bad(skill_workspace):
            skill_workspace("demo")
        """
    )

    result = project.runpytest("-p", "no:cacheprovider", "--strict-markers")

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.skills_runtime: unknown runtime 'vm' (choose from local, sandbox, docker)"]
    )


def test_bad_runtime_setting_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "no:cacheprovider", "--skills-runtime=vm")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*command line: invalid choice 'vm' for --skills-runtime"
            " (choose from local, sandbox, docker)"
        ]
    )


def test_unknown_skill_and_skill_tree_writes_fail_clearly(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_unknown(skill_workspace):
            skill_workspace("dmeo")

        def test_writes_skill(skill_workspace):
            skill_workspace("demo").run("echo x >> scripts/hello.sh")

        def test_writes_allowed(skill_workspace):
            skill_workspace("demo").run("echo y >> scripts/hello.sh", allow_skill_writes=True)
        """
    )

    result = project.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*skill_workspace('dmeo'): unknown skill 'dmeo'. Did you mean 'demo'?*",
            "*command 'echo x >> scripts/hello.sh' modified the skill tree of 'demo' (*):"
            " scripts/hello.sh; skills must write into $OUTPUT_DIR or $WORK_DIR"
            " (pass allow_skill_writes=True to accept)",
        ]
    )


def test_skill_by_path_and_missing_runtime_can_skip(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    skill = make_skill(tmp_path / "elsewhere", "other")
    pytester.makepyfile(
        f"""
        from pathlib import Path

        def test_path(skill_workspace):
            ws = skill_workspace(Path({str(skill.directory)!r}))
            assert ws.run("echo $SKILL_NAME").stdout == "other\\n"

        def test_missing(skill_workspace):
            skill_workspace(Path({str(skill.directory)!r}), runtime="docker")
        """
    )

    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-rs",
        "--skills-docker-image=no/such:image",
        "--skills-runtime-missing=skip",
    )

    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*skills runtime 'docker' is not available*"])


@pytest.mark.parametrize("method", ["run", "exec"])
def test_a_refused_command_is_reported_at_the_test_not_in_the_plugin(
    project: pytest.Pytester, method: str
) -> None:
    project.makepyfile(
        f"""
        def test_outside(skill_workspace):
            ws = skill_workspace("demo")
            ws.{method}("true", cwd="/etc")
        """
    )
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f'>       ws.{method}("true", cwd="/etc")',
            "E   *WorkspacePathError: cwd '/etc' resolves to '/etc', outside the workspace *",
        ]
    )
    assert "workspace_fixtures.py" not in result.stdout.str()


def test_skills_dir_adds_a_folder_to_look_in(project: pytest.Pytester) -> None:
    make_skill(project.path / "elsewhere", "other")
    project.makepyfile(
        """
        import pytest

        def test_other(skill_workspace):
            ws = skill_workspace("other", skills_dir="elsewhere")
            assert ws.skill.name == "other"

        def test_not_in_the_roots(skill_workspace):
            skill_workspace("other")
        """
    )

    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*skill_workspace('other'): * (roots: *skills)"])


def test_a_name_without_skill_roots_fails_saying_where_to_look(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_it(skill_workspace):\n    skill_workspace('demo')\n")

    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*skill_workspace('demo'): no skill roots to look in; configure --skills-root /"
            " the skills_roots ini option, or pass skills_dir=... or a Skill"
        ]
    )
