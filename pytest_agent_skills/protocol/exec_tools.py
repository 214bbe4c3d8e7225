"""The interactive tools: ``skill_exec``, ``skill_write_stdin``, ``skill_poll_session`` and
``skill_kill_session`` (the reference's names, parameters and ``ExecOutput`` shape).

They are thin over the workspace's sessions (:mod:`pytest_agent_skills.workspace.interactive`):
``skill_exec`` prepares its command exactly as ``skill_run`` does (same staging, ``cwd`` rules,
environment and timeout) and collects ``output_files`` when the command exits.  A session offers
all four together (``SkillSession(exec_tools=True)``): the reference's tool set has
``skill_exec`` but not the tools that answer or poll it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..workspace.interactive import (
    DEFAULT_EXEC_YIELD_MS,
    DEFAULT_IO_YIELD_MS,
    DEFAULT_POLL_LINES,
    MAX_YIELD_MS,
    UnknownSessionError,
)
from .coercion import Leniency
from .outcome import INVALID_ARGUMENTS, UNKNOWN_SESSION, ToolCallError
from .tools import (
    SKILL_RUN,
    SkillTool,
    ToolContext,
    _object,
    _skill,
    _workspace_errors,
    run_options,
)

if TYPE_CHECKING:
    from ..workspace.interactive import ExecSession


def _skill_exec(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    skill = _skill(context, arguments["skill"], "skill")
    with _workspace_errors():
        session = context.workspace().exec(
            skill,
            arguments["command"],
            **run_options(context, arguments),
            tty=arguments.get("tty", False),
        )
        chunk = session.poll(
            arguments.get("yield_time_ms") or DEFAULT_EXEC_YIELD_MS,
            arguments.get("poll_lines", 0),
        )
    return chunk.to_dict()


def _session(context: ToolContext, arguments: dict[str, Any]) -> ExecSession:
    """The session ``session_id`` names; an empty or unknown one is a model mistake."""
    session_id = str(arguments["session_id"]).strip()
    if not session_id:
        raise ToolCallError(
            INVALID_ARGUMENTS,
            "session_id must not be empty; pass the session_id that skill_exec returned.",
        )
    workspace = context.existing_workspace()
    try:
        if workspace is None:
            raise UnknownSessionError.about(session_id)
        return workspace.exec_sessions.get(session_id)
    except UnknownSessionError as error:
        ids = workspace.exec_sessions.ids() if workspace is not None else []
        raise ToolCallError(
            UNKNOWN_SESSION,
            f"{error}. Sessions: {', '.join(ids) or '(none)'};"
            " start one with skill_exec (a killed session is gone).",
        ) from None


def _skill_write_stdin(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    session = _session(context, arguments)
    with _workspace_errors():
        chunk = session.write(
            arguments.get("chars", ""),
            submit=arguments.get("submit", False),
            yield_ms=arguments.get("yield_time_ms") or DEFAULT_IO_YIELD_MS,
            lines=arguments.get("poll_lines", 0),
        )
    return chunk.to_dict()


def _skill_poll_session(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    session = _session(context, arguments)
    with _workspace_errors():
        chunk = session.poll(
            arguments.get("yield_time_ms") or DEFAULT_IO_YIELD_MS,
            arguments.get("poll_lines", 0),
        )
    return chunk.to_dict()


def _skill_kill_session(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    session = _session(context, arguments)
    with _workspace_errors():
        status = context.existing_workspace().exec_sessions.kill(session.id)  # type: ignore[union-attr]
    return {"ok": True, "session_id": session.id, "status": status}


_SESSION_ID = {
    "type": "string",
    "description": "The session_id that skill_exec returned.",
}
_POLL_LINES = {
    "type": "integer",
    "minimum": 0,
    "description": f"Return at most this many lines; 0 means {DEFAULT_POLL_LINES}. The rest"
    " comes with the next call.",
}


def _yield_time(default_ms: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 0,
        "description": f"Wait up to this many milliseconds for output; 0 means {default_ms}."
        " The call returns earlier when the command exits or prints a prompt and waits."
        f" Longer waits are cut to {MAX_YIELD_MS}.",
    }


_RUN_PROPERTIES = SKILL_RUN.parameters["properties"]

SKILL_EXEC = SkillTool(
    "skill_exec",
    "Start a command in the skill's folder that may ask for input (a prompt, a menu, a terminal"
    " program), with the same workspace, environment and output_files as skill_run. Returns"
    " status (running or exited), session_id, the output so far, and interaction.needs_input"
    " when it seems to wait for input. Answer with skill_write_stdin, read more with"
    " skill_poll_session, stop it with skill_kill_session; once it exits, result holds the"
    " skill_run result (exit_code, output_files).",
    _object(
        {
            "skill": _RUN_PROPERTIES["skill"],
            "command": _RUN_PROPERTIES["command"],
            "cwd": _RUN_PROPERTIES["cwd"],
            "env": _RUN_PROPERTIES["env"],
            "stdin": {"type": "string", "description": "Text written to stdin at the start."},
            "tty": {
                "type": "boolean",
                "default": False,
                "description": "Run in a terminal (for programs that need one); the terminal"
                " echoes what you write.",
            },
            "yield_time_ms": _yield_time(DEFAULT_EXEC_YIELD_MS),
            "poll_lines": _POLL_LINES,
            "output_files": {
                **_RUN_PROPERTIES["output_files"],
                "description": _RUN_PROPERTIES["output_files"]["description"]
                + " Collected when the command exits.",
            },
            "timeout": _RUN_PROPERTIES["timeout"],
            "save_as_artifacts": _RUN_PROPERTIES["save_as_artifacts"],
            "omit_inline_content": _RUN_PROPERTIES["omit_inline_content"],
        },
        ["skill", "command"],
    ),
    _skill_exec,
    Leniency(floored=("timeout",)),
)

SKILL_WRITE_STDIN = SkillTool(
    "skill_write_stdin",
    "Write to the stdin of a running skill_exec session, then return its new output (the"
    " skill_exec result shape). submit=true ends the line (Enter). With empty chars and"
    " submit=false it only polls.",
    _object(
        {
            "session_id": _SESSION_ID,
            "chars": {"type": "string", "description": "The text to write."},
            "submit": {
                "type": "boolean",
                "default": False,
                "description": "Append a newline after chars.",
            },
            "yield_time_ms": _yield_time(DEFAULT_IO_YIELD_MS),
            "poll_lines": _POLL_LINES,
        },
        ["session_id"],
    ),
    _skill_write_stdin,
)

SKILL_POLL_SESSION = SkillTool(
    "skill_poll_session",
    "Return the new output of a skill_exec session, its status, and once it has exited its"
    " result (the skill_exec result shape).",
    _object(
        {
            "session_id": _SESSION_ID,
            "yield_time_ms": _yield_time(DEFAULT_IO_YIELD_MS),
            "poll_lines": _POLL_LINES,
        },
        ["session_id"],
    ),
    _skill_poll_session,
)

SKILL_KILL_SESSION = SkillTool(
    "skill_kill_session",
    "Stop a skill_exec session: kill its processes and forget it. Returns ok, session_id and"
    " status (killed, or exited if it had ended).",
    _object({"session_id": _SESSION_ID}, ["session_id"]),
    _skill_kill_session,
)

#: Offered together, after skill_run, with ``SkillSession(exec_tools=True)``.
EXEC_TOOLS: tuple[SkillTool, ...] = (
    SKILL_EXEC,
    SKILL_WRITE_STDIN,
    SKILL_POLL_SESSION,
    SKILL_KILL_SESSION,
)
