"""The record of one conversation: what the model saw, did, and left behind.

Every step of the agent loop lands here as plain data: each request sent to
the model (system text, tool names, the full body), each model turn with its
tool calls (arguments, result, error flag, state delta), the session state
and the workspace files at the end, and the final text.  :meth:`format`
prints it turn by turn for failure reports.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import read_head_if_regular

if TYPE_CHECKING:
    from ..protocol.coercion import Coercion

#: Per-file cap when the workspace files are captured at the end of a run.
FILE_CAPTURE_LIMIT = 1024 * 1024
#: Fields whose values change from run to run; left out of :meth:`Trajectory.comparable`.
VOLATILE_RESULT_FIELDS = frozenset({"duration_ms"})
_SHOWN_RESULT = 300


@dataclass(frozen=True)
class RequestRecord:
    """The N-th request sent to the model."""

    turn: int
    system: str
    tools: tuple[str, ...]
    body: dict[str, Any]
    #: State keys the request removed: at a new user turn, or in once mode (key -> None).
    state_delta: dict[str, None] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    """One tool call the model made and what came back."""

    turn: int
    id: str
    name: str
    raw_arguments: str
    #: The parsed arguments; None when the model sent text that is not a JSON object.
    arguments: dict[str, Any] | None
    result: Any
    is_error: bool = False
    state_delta: dict[str, str] = field(default_factory=dict)
    #: Lax argument values converted before the tool ran (``"5"`` -> 5 for an integer).
    coercions: tuple[Coercion, ...] = ()


@dataclass(frozen=True)
class TurnRecord:
    index: int
    text: str | None
    calls: tuple[CallRecord, ...]


@dataclass
class UserTurnRecord:
    """One user message and the model turns ``start`` to ``end`` (exclusive) answering it."""

    index: int
    user: str
    start: int
    end: int
    final: str | None = None
    #: The session state and workspace files when this user turn ended.
    state: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass
class Trajectory:
    """A whole conversation; with several user messages, :attr:`user_turns` splits it and
    :meth:`for_user_turn` gives the part answering one of them."""

    #: The first user message.
    user: str
    requests: list[RequestRecord] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)
    state: dict[str, str] = field(default_factory=dict)
    #: Workspace files at the end, by path relative to the workspace root (``out/report.txt``).
    files: dict[str, bytes] = field(default_factory=dict)
    final: str | None = None
    workspace: Path | None = None
    user_turns: list[UserTurnRecord] = field(default_factory=list)
    load_mode: str = "turn"

    @property
    def users(self) -> list[str]:
        """Every user message, in order."""
        return [turn.user for turn in self.user_turns] or [self.user]

    def for_user_turn(self, index: int) -> Trajectory:
        """The part of the conversation answering user message ``index``: its requests and
        model turns (numbered from 0), and the state, files and final text at its end."""
        part = self.user_turns[index]
        start = part.start

        def shifted(turn: TurnRecord) -> TurnRecord:
            calls = tuple(dataclasses.replace(call, turn=call.turn - start) for call in turn.calls)
            return dataclasses.replace(turn, index=turn.index - start, calls=calls)

        return Trajectory(
            part.user,
            requests=[
                dataclasses.replace(request, turn=request.turn - start)
                for request in self.requests[start : part.end]
            ],
            turns=[shifted(turn) for turn in self.turns[start : part.end]],
            state=part.state,
            files=part.files,
            final=part.final,
            workspace=self.workspace,
            load_mode=self.load_mode,
        )

    @property
    def calls(self) -> list[CallRecord]:
        return [call for turn in self.turns for call in turn.calls]

    def calls_named(self, name: str) -> list[CallRecord]:
        return [call for call in self.calls if call.name == name]

    @property
    def call_names(self) -> list[str]:
        return [call.name for call in self.calls]

    def text(self, path: str) -> str | None:
        """A captured workspace file as text (None when absent)."""
        content = self.files.get(path.lstrip("/"))
        return None if content is None else content.decode("utf-8", errors="replace")

    def comparable(self) -> dict[str, Any]:
        """Everything but what legitimately changes between runs (timings, ids, paths)."""
        workspace = str(self.workspace) if self.workspace else None

        def clean(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items() if k not in VOLATILE_RESULT_FIELDS}
            if isinstance(value, list):
                return [clean(item) for item in value]
            if isinstance(value, str) and workspace:
                return value.replace(workspace, "<workspace>")
            return value

        comparable: dict[str, Any] = clean(
            {
                "requests": [
                    {"system": r.system, "tools": list(r.tools), "messages": _without_ids(r.body)}
                    for r in self.requests
                ],
                "turns": [
                    {
                        "text": turn.text,
                        "calls": [
                            {
                                "name": c.name,
                                "arguments": c.raw_arguments,
                                "result": c.result,
                                "is_error": c.is_error,
                                "state_delta": c.state_delta,
                            }
                            for c in turn.calls
                        ],
                    }
                    for turn in self.turns
                ],
                "state": self.state,
                "files": {path: content.decode("latin-1") for path, content in self.files.items()},
                "final": self.final,
            }
        )
        return comparable

    def format(self) -> str:
        """The conversation turn by turn: calls, arguments, trimmed results, state changes."""
        lines = [f"Trajectory: {len(self.turns)} model turn(s), {len(self.calls)} tool call(s)"]
        starts = {part.start: part for part in self.user_turns if len(self.user_turns) > 1}
        if not starts:
            lines.append(f"  user: {_trim(self.user)}")
        for turn in self.turns:
            if turn.index in starts:
                part = starts[turn.index]
                lines.append(f"  user turn {part.index}: {_trim(part.user)}")
            request = self.requests[turn.index] if turn.index < len(self.requests) else None
            if request is not None and request.state_delta:
                cleared = ", ".join(request.state_delta)
                lines.append(f"  (load mode {self.load_mode}: removed {_trim(cleared, 200)})")
            shown_tools = ", ".join(request.tools) if request else "?"
            lines.append(f"  turn {turn.index}: model saw tools [{shown_tools}]")
            for call in turn.calls:
                flag = "ERROR " if call.is_error else ""
                lines.append(f"    call {call.name} {_trim(call.raw_arguments)}")
                for coercion in call.coercions:
                    lines.append(f"      coerced {_trim(coercion.describe(), 120)}")
                lines.append(f"      -> {flag}{_trim(_json(call.result))}")
                for key, value in call.state_delta.items():
                    lines.append(f"      state {key} = {_trim(value, 80)}")
            if turn.text is not None:
                lines.append(f"    say {_trim(turn.text)}")
        if self.final is None:
            lines.append("  (no final text: the conversation did not end)")
        lines.append("  final state: " + (_trim(_json(self.state), 600) if self.state else "{}"))
        listing = ", ".join(f"{path} ({len(data)} B)" for path, data in sorted(self.files.items()))
        lines.append(f"  files: {listing or '(none)'}")
        return "\n".join(lines)


def _without_ids(body: dict[str, Any]) -> list[Any]:
    messages = []
    for message in body.get("messages", []):
        message = {k: v for k, v in message.items() if k != "tool_call_id"}
        if message.get("role") == "tool":
            # Tool results are JSON text; parsed, their volatile fields can be left out.
            with contextlib.suppress(ValueError, TypeError):
                message["content"] = json.loads(message["content"])
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {k: v for k, v in c.items() if k != "id"} for c in message["tool_calls"]
            ]
        messages.append(message)
    return messages


def _json(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _trim(text: str, limit: int = _SHOWN_RESULT) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more chars)"


def capture_files(
    root: Path, skip: tuple[str, ...] = ("skills", "runs", "metadata.json")
) -> dict[str, bytes]:
    """Regular files under ``root`` (not following symlinks), minus staged skills and run logs,
    in path order.  The skipped top-level folders are not walked at all."""
    found = _regular_files(os.fspath(root), skip)
    files: dict[str, bytes] = {}
    for parts, path in sorted(found):
        content = read_head_if_regular(path, FILE_CAPTURE_LIMIT)
        if content is not None:
            files["/".join(parts)] = content
    return files


def _regular_files(root: str, skip: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """The regular files under ``root`` (their parts and paths), never through a link, and
    none of the top-level names ``skip``; a folder that cannot be listed is passed over, as
    ``os.walk`` does.  Without recursion: a command may nest folders without end."""
    found: list[tuple[tuple[str, ...], str]] = []
    folders: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [(root, (), skip)]
    while folders:
        folder, parts, skipped = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = [entry for entry in listing if entry.name not in skipped]
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append((entry.path, (*parts, entry.name), ()))
            elif entry.is_file(follow_symlinks=False):
                found.append(((*parts, entry.name), entry.path))
    return found
