"""Interactive sessions (Workspace.exec) under every runtime, with real prompting programs."""
# ruff: noqa: F811 - pytest fixtures imported from tests.support.workspace are used as arguments

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_agent_skills.workspace import (
    Runtime,
    Workspace,
    WorkspaceError,
    WorkspacePathError,
    interactive,
)
from pytest_agent_skills.workspace.interactive import (
    CHUNK_CAP_BYTES,
    UNREAD_CAP_BYTES,
    UnknownSessionError,
)
from tests.support.interactive import (
    GREET,
    GREETER,
    MENU,
    YIELD_MS,
    all_gone,
    answer_until_exit,
    descriptors_past_select_limit,
    exited,
    greeter,
    poll_until,
    processes_running,
    unique_marker,
    wait_for,
)
from tests.support.workspace import make_skill, runtime, skill, work_root, workspace  # noqa: F401


def test_a_prompting_program_is_answered_and_its_output_file_collected(
    workspace: Workspace,
) -> None:
    session = workspace.exec(greeter(), GREET, output_files=["out/*.txt"])

    asked = session.poll(YIELD_MS)
    menu = session.write("Ada", submit=True, yield_ms=YIELD_MS)
    last = answer_until_exit(session, "3")[-1]

    assert (asked.status, asked.output, asked.offset, asked.next_offset) == (
        "running",
        "Name? ",
        0,
        6,
    )
    assert (asked.interaction.needs_input, asked.interaction.kind, asked.interaction.hint) == (
        True,
        "prompt",
        "Name?",
    )
    assert asked.exit_code is None and asked.result is None
    assert (menu.status, menu.output, menu.offset) == ("running", MENU, 6)
    assert (menu.interaction.kind, menu.interaction.hint) == (
        "selection",
        "Enter the number of your colour:",
    )
    assert (last.status, last.exit_code) == ("exited", 0)
    result = session.result
    assert result is not None and result.ok
    assert result.stdout == f"Name? {MENU}Hello, Ada! You like blue.\n"
    [greeting] = result.output_files
    assert (greeting.name, greeting.content) == ("out/greeting.txt", "Hello, Ada! You like blue.\n")
    assert (workspace.out_dir / "greeting.txt").read_text() == "Hello, Ada! You like blue.\n"


def test_the_result_comes_with_the_first_call_that_sees_the_exit(workspace: Workspace) -> None:
    session = workspace.exec(greeter(), GREET, stdin="Ada\n2\n", output_files=["out/*"])

    chunks = poll_until(session, exited)
    again = session.poll(YIELD_MS)

    assert "".join(chunk.output for chunk in chunks) == f"Name? {MENU}Hello, Ada! You like green.\n"
    assert chunks[-1].result is not None
    assert [chunk.result for chunk in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert chunks[-1].to_dict()["result"]["output_files"][0]["name"] == "out/greeting.txt"
    assert (again.status, again.output, again.exit_code, again.result) == ("exited", "", 0, None)
    assert again.offset == again.next_offset == chunks[-1].next_offset
    assert session.result is chunks[-1].result


def test_a_terminal_session_echoes_input_and_is_a_tty(workspace: Workspace) -> None:
    probe = workspace.exec(
        greeter(),
        'python3 -c "import sys; print(sys.stdin.isatty(), sys.stdout.isatty())"',
        tty=True,
    )
    session = workspace.exec(greeter(), GREET, tty=True)

    [*_, ttys] = poll_until(probe, exited)
    asked = session.poll(YIELD_MS)
    menu = session.write("Ada", submit=True, yield_ms=YIELD_MS)

    assert ttys.result is not None and ttys.result.stdout.strip() == "True True"
    assert asked.output == "Name? "
    assert menu.output == "Ada\n" + MENU  # the terminal's echo, \r\n shown as \n


def test_output_across_polls_continues_at_each_offset(workspace: Workspace) -> None:
    command = (
        'for i in $(seq 1 100); do echo "ligne $i é"; done; printf "More? "; read x;'
        ' echo "after $x"'
    )
    session = workspace.exec(greeter(), command)

    pages = poll_until(session, lambda chunk: chunk.interaction is not None, lines=30)
    last = answer_until_exit(session, "yes")[-1]

    lines = [f"ligne {i} é\n" for i in range(1, 101)]
    assert [page.output for page in pages if page.output][:3] == [
        "".join(lines[0:30]),
        "".join(lines[30:60]),
        "".join(lines[60:90]),
    ]
    assert "".join(page.output for page in pages) == "".join(lines) + "More? "
    assert pages[-1].next_offset == len(("".join(lines) + "More? ").encode())  # bytes, not chars
    assert last.status == "exited" and session.result.stdout.endswith("after yes\n")


def test_a_session_past_its_timeout_is_killed_and_keeps_its_output(workspace: Workspace) -> None:
    marker = unique_marker()
    session = workspace.exec(
        greeter(), f"setsid sleep {marker} & echo started; sleep {marker}", timeout=1
    )

    chunks = poll_until(session, exited)

    assert "".join(chunk.output for chunk in chunks) == "started\n"
    assert chunks[-1].exit_code == -1
    result = chunks[-1].result
    assert result is not None and result.timed_out and result.stdout == "started\n"
    assert any("timed out" in warning for warning in result.warnings)
    assert all_gone(marker)


def test_kill_stops_a_running_session_and_forgets_it(workspace: Workspace) -> None:
    marker = unique_marker()
    running = workspace.exec(greeter(), f"printf 'Name? '; sleep {marker}")
    finished = workspace.exec(greeter(), "echo done")
    running.poll(YIELD_MS)
    poll_until(finished, exited)
    wait_for(lambda: processes_running(marker), "the session's sleep is running")

    assert workspace.exec_sessions.kill(running.id) == "killed"
    assert workspace.exec_sessions.kill(finished.id) == "exited"

    assert all_gone(marker)
    for session_id in (running.id, finished.id):
        with pytest.raises(UnknownSessionError, match=rf"^unknown session_id: {session_id}$"):
            workspace.exec_sessions.get(session_id)
    with pytest.raises(UnknownSessionError, match=r"^unknown session_id: nope$"):
        workspace.exec_sessions.kill("nope")


def test_closing_the_workspace_kills_every_session(runtime: Runtime) -> None:
    marker = unique_marker()
    workspace = runtime.create_workspace("exec-close")
    for index in range(2):
        session = workspace.exec(
            greeter(),
            f"(sleep {marker} &); nohup sleep {marker} >/dev/null 2>&1 &"
            f" setsid sleep {marker} >/dev/null 2>&1 & printf 'Go{index}? '; read x",
        )
        assert session.poll(YIELD_MS).output == f"Go{index}? "
    wait_for(lambda: len(processes_running(marker)) >= 6, "the sessions' sleeps are running")

    workspace.close()

    assert all_gone(marker)
    assert not workspace.path.exists()


def test_no_process_survives_the_end_of_the_command(workspace: Workspace) -> None:
    marker = unique_marker()
    session = workspace.exec(
        greeter(),
        f"nohup sleep {marker} >/dev/null 2>&1 & setsid sleep {marker} >/dev/null 2>&1 &"
        " printf 'Stop? '; read x",
    )
    session.poll(YIELD_MS)
    wait_for(lambda: len(processes_running(marker)) >= 2, "the background sleeps are running")

    last = answer_until_exit(session, "y")[-1]

    assert last.exit_code == 0
    assert all_gone(marker)


def test_unread_output_is_capped_and_the_gap_reported(workspace: Workspace) -> None:
    total = 3 * UNREAD_CAP_BYTES
    session = workspace.exec(
        greeter(), f'head -c {total} /dev/zero | tr "\\0" x; printf "\\nEnd? "; read x'
    )
    # Arrived, not just written: Docker holds up to megabytes of an exec's output on the way.
    wait_for(lambda: session.received_bytes == total + len("\nEnd? "), "all the output arrived")

    chunks = poll_until(session, lambda chunk: chunk.output.endswith("End? "), lines=1)
    last = answer_until_exit(session, "")[-1]

    first = chunks[0]
    assert first.offset > 0  # the oldest output was dropped before anything read it
    assert first.warnings == (
        f"{first.offset} bytes of output were dropped before a call read them (at most"
        f" {UNREAD_CAP_BYTES} unread bytes are kept); poll more often or write less output",
    )
    assert all(len(chunk.output.encode()) <= CHUNK_CAP_BYTES for chunk in chunks)
    assert first.offset + sum(len(chunk.output) for chunk in chunks) == total + len("\nEnd? ")
    result = session.result
    assert result.stdout_truncated and result.stdout_bytes == total + len("\nEnd? ")
    assert last.status == "exited"


def test_the_run_rules_apply_environment_cwd_and_refusals(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    session = workspace.exec(
        greeter(),
        'echo "$HOME|$SKILL_NAME|$(basename "$PWD")|${OPENAI_API_KEY:-unset}|$GIVEN"',
        env={"GIVEN": "given"},
        cwd="scripts",
    )

    [*_, last] = poll_until(session, exited)

    assert last.result.stdout == f"{workspace.path}/home|interactive-greeter|scripts|unset|given\n"
    with pytest.raises(WorkspacePathError, match="outside the workspace"):
        workspace.exec(greeter(), "pwd", cwd="/etc")
    with pytest.raises(WorkspaceError, match=r"^skill_exec needs a non-empty command$"):
        workspace.exec(greeter(), "  ")
    with pytest.raises(WorkspaceError, match=r"^chars is not valid Unicode text"):
        session.write("\udcff")


def test_input_for_an_exited_process_is_reported_not_written(workspace: Workspace) -> None:
    session = workspace.exec(greeter(), "true")
    poll_until(session, exited)

    chunk = session.write("late", submit=True, yield_ms=YIELD_MS)

    assert (chunk.status, chunk.warnings) == (
        "exited",
        ("the process has exited; the input (5 bytes) was not written",),
    )


def test_input_the_process_does_not_read_is_reported(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interactive, "WRITE_TIMEOUT_SECONDS", 0.5)  # 5 s in earnest
    size = 16 * 1024 * 1024  # more than every buffer on the way (pipe, pty, Docker's socket)

    with descriptors_past_select_limit():  # the session's own descriptors are numbered past 1024
        session = workspace.exec(greeter(), "printf 'Ready? '; exec sleep 600")
        asked = session.poll(YIELD_MS)
        chunk = session.write("x" * size)

    assert asked.output == "Ready? "
    [warning] = chunk.warnings
    assert_not_read(warning, size)
    assert chunk.status == "running"


def assert_not_read(warning: str, size: int) -> None:
    """``warning`` says that part, not all, of ``size`` bytes of input was written."""
    written = re.fullmatch(
        rf"only (\d+) of {size} bytes of input were written within 0.5s: the process is not"
        " reading its stdin",
        warning,
    )
    assert written is not None, warning
    assert 0 < int(written[1]) < size


def test_stdin_given_at_the_start_that_the_process_never_reads_is_reported(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interactive, "WRITE_TIMEOUT_SECONDS", 0.5)  # 5 s in earnest
    size = 8 * 1024 * 1024

    session = workspace.exec(greeter(), "exec sleep 600", stdin="x" * size)
    first = session.poll(10)
    later = session.poll(10)
    workspace.exec_sessions.kill(session.id)
    [last] = poll_until(session, exited)

    [warning] = first.warnings
    assert_not_read(warning, size)
    assert later.warnings == ()  # said once
    assert last.result is not None and last.result.warnings[0] == warning


def test_a_closed_workspace_starts_no_session(runtime: Runtime, tmp_path: Path) -> None:
    workspace = runtime.create_workspace("exec-closed")
    workspace.close()

    with pytest.raises(WorkspaceError, match=r"is closed$"):
        workspace.exec(make_skill(tmp_path), "true")


def test_a_session_kept_after_its_workspace_closed_has_no_result(runtime: Runtime) -> None:
    workspace = runtime.create_workspace("exec-kept")
    session = workspace.exec(greeter(), "printf 'Name? '; read x")
    session.poll(YIELD_MS)

    workspace.close()
    chunk = session.poll(YIELD_MS)

    assert (chunk.status, chunk.result, session.result) == ("exited", None, None)


def test_output_printed_at_once_is_not_lost(workspace: Workspace) -> None:
    # Docker: the first output can arrive with the HTTP response that opens the exec's stream.
    session = workspace.exec(greeter(), "printf 'Now? '; read x; echo \"got $x\"")

    asked = session.poll(YIELD_MS)
    last = answer_until_exit(session, "it")[-1]

    assert asked.output == "Now? "
    assert (last.status, session.result.stdout) == ("exited", "Now? got it\n")


def test_the_skill_workspace_fixture_starts_sessions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        from pathlib import Path

        def test_greets(skill_workspace):
            ws = skill_workspace(Path({str(GREETER)!r}))
            session = ws.exec("{GREET}", output_files=["out/*.txt"])
            assert session.poll(60000).output == "Name? "
            session.write("Ada", submit=True, yield_ms=60000)
            session.write("1", submit=True, yield_ms=60000)
            while session.result is None:
                session.poll(2000)
            assert session.result.output_files[0].content == "Hello, Ada! You like red.\\n"
            ws.assert_output_contains("out/greeting.txt", "Ada")
        """
    )

    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "skills_validate=false")

    result.assert_outcomes(passed=1)


def test_a_session_started_while_its_workspace_closes_is_killed(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """close() from another thread between the start of the process and the session's entry in
    the workspace: the process must not outlive the workspace (here close() comes right then)."""
    marker = unique_marker()
    workspace = runtime.create_workspace("exec-closing")
    start = runtime.start_interactive

    def start_then_close(*arguments, **keywords):  # the other thread's close(), at that moment
        process = start(*arguments, **keywords)
        wait_for(lambda: processes_running(marker), "the session's sleep is running")
        workspace.close()
        return process

    monkeypatch.setattr(runtime, "start_interactive", start_then_close)

    closed = rf"^workspace {re.escape(str(workspace.path))} is closed$"
    with pytest.raises(WorkspaceError, match=closed):
        workspace.exec(greeter(), f"sleep {marker}")

    assert all_gone(marker)
    assert workspace.exec_sessions.ids() == []
