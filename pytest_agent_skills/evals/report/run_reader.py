"""A run of the output folder read for the report: its ``runs[]`` entry, its grading,
transcript and output files (each shown up to a limit, the page's inlined text within a
budget)."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from .located import Node, load_node
from .values import Expectation, Message, OutputFile, Run, RunError, ToolCall, Transcript

# What one page inlines: enough to read a run, never a page that a browser chokes on.
OUTPUT_TEXT_LIMIT = 20_000  # characters of one output file shown
OUTPUT_FILES_LIMIT = 200  # output files listed per run
_SNIFF_BYTES = 4 * OUTPUT_TEXT_LIMIT + 4

ERROR_KINDS = ("model", "grading", "harness", "interrupted")
_CONFIGURATION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass
class Budget:
    """Characters of output files the page may still inline."""

    left: int



def _read_error(node: Node) -> RunError:
    node.obj()
    kind = node.child("kind").text()
    if kind not in ERROR_KINDS:
        raise node.child("kind").fail(
            f"unknown error kind {kind!r}; one of {', '.join(ERROR_KINDS)}"
        )
    return RunError(kind, node.opt_text("message"))


def _read_expectations(node: Node) -> tuple[Expectation, ...]:
    expectations = []
    for item in node.items():
        item.obj()
        expectations.append(
            Expectation(
                item.child("text").text(), item.child("passed").flag(), item.opt_text("evidence")
            )
        )
    return tuple(expectations)


def read_run(out_dir: Path, node: Node, budget: Budget) -> Run:
    node.obj()
    eval_id = node.child("eval_id").integer()
    configuration = node.child("configuration").text()
    if not _CONFIGURATION_NAME.fullmatch(configuration):
        raise node.child("configuration").fail(
            f"{configuration!r} is not a configuration name (with_skill, without_skill, baseline)"
        )
    run_number = node.child("run_number").integer()
    result = node.child("result").obj()
    total = result.opt_int("total")
    run_dir = node.opt_text("run_dir", f"eval-{eval_id}/{configuration}/run-{run_number}")
    folder = _inside(out_dir, run_dir, node.child("run_dir"))
    expectations: tuple[Expectation, ...] = ()
    if node.has("expectations"):
        expectations = _read_expectations(node.child("expectations"))
    elif (folder / "grading.json").is_file():  # benchmark.json without them: the run's own
        grading = load_node(folder / "grading.json").obj()
        if grading.has("expectations"):
            expectations = _read_expectations(grading.child("expectations"))
    transcript_file = folder / "transcript.json"
    transcript = (
        _read_transcript(load_node(transcript_file)) if transcript_file.is_file() else None
    )
    error = _read_error(node.child("error")) if node.has("error") else None
    if error is None and transcript is not None:
        error = transcript.error
    outputs, omitted = _read_outputs(folder / "outputs", budget)
    return Run(
        eval_id=eval_id,
        eval_name=node.opt_text("eval_name", f"eval {eval_id}"),
        configuration=configuration,
        run_number=run_number,
        pass_rate=result.child("pass_rate").number(),
        passed=result.opt_int("passed"),
        total=total,
        time_seconds=result.opt_number("time_seconds"),
        tokens=result.opt_int("tokens"),
        tool_calls=result.opt_int("tool_calls"),
        errors=result.opt_int("errors"),
        error=error,
        expectations=expectations,
        notes=tuple(item.text() for item in node.child("notes").items())
        if node.has("notes")
        else (),
        run_dir=run_dir,
        found=folder.is_dir(),
        transcript=transcript,
        outputs=outputs,
        outputs_omitted=omitted,
        skipped=node.has("skipped") and node.child("skipped").flag(),
        stop_reason=result.opt_text("stop_reason"),
    )


def _inside(out_dir: Path, relative: str, node: Node) -> Path:
    """``out_dir / relative``, refusing a path that leaves the output folder."""
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise node.fail(f"{relative!r} is not a folder inside the output folder")
    return out_dir / candidate


def _content_text(node: Node) -> str:
    """A message's content: a string, null, or OpenAI's list of parts (text parts joined)."""
    if node.value is None:
        return ""
    if isinstance(node.value, str):
        return node.value
    parts = []
    for part in node.items():
        part.obj()
        kind = part.opt_text("type", "text")
        parts.append(part.opt_text("text") if kind == "text" else f"[{kind} part]")
    return "\n".join(parts)


def _arguments_text(node: Node) -> str:
    value = node.value
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return str(node.value)  # shown as the model sent it
    return json.dumps(value, indent=2, ensure_ascii=False)


def _result_text(text: str) -> str:
    """A tool's result, pretty-printed when it is a JSON object or list (as skill tools answer)."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def _read_transcript(root: Node) -> Transcript:
    root.obj()
    results: dict[str, str] = {}
    raw_messages = list(root.child("messages").items()) if root.has("messages") else []
    for message in raw_messages:
        message.obj()
        if message.opt_text("role") == "tool" and message.has("tool_call_id"):
            call_id = message.child("tool_call_id").text()
            results[call_id] = _result_text(_content_text(message.child("content")))
    messages = []
    for message in raw_messages:
        role = message.child("role").text()
        if role == "tool":
            continue  # shown with the call it answers
        calls = []
        if message.has("tool_calls"):
            for call in message.child("tool_calls").items():
                function = call.obj().child("function").obj()
                call_id = call.opt_text("id")
                calls.append(
                    ToolCall(
                        function.child("name").text(),
                        _arguments_text(function.child("arguments")),
                        results.get(call_id),
                    )
                )
        messages.append(Message(role, _content_text(message.child("content")), tuple(calls)))
    if not raw_messages and root.has("tool_calls"):
        # No messages recorded: the paired calls alone still tell what the agent did.
        calls = [
            ToolCall(
                call.obj().child("name").text(),
                _arguments_text(call.child("arguments")),
                _result_text(_content_text(call.child("result"))) if call.has("result") else None,
            )
            for call in root.child("tool_calls").items()
        ]
        messages.append(Message("assistant", "", tuple(calls)))
    usage = root.child("usage") if root.has("usage") else None
    return Transcript(
        prompt=root.opt_text("prompt"),
        messages=tuple(messages),
        final_text=root.opt_text("final_text"),
        error=_read_error(root.child("error")) if root.has("error") else None,
        total_tokens=usage.obj().opt_int("total_tokens") if usage is not None else None,
    )


def _read_outputs(folder: Path, budget: Budget) -> tuple[tuple[OutputFile, ...], int]:
    """The run's output files, sorted; symlinks are listed, never followed."""
    if not folder.is_dir() or folder.is_symlink():
        return (), 0
    found: list[tuple[str, Path]] = []
    for parent, dirs, files in os.walk(folder):  # does not descend into linked folders
        dirs.sort()
        base = Path(parent)
        for name in sorted(files) + [d for d in dirs if (base / d).is_symlink()]:
            found.append(((base / name).relative_to(folder).as_posix(), base / name))
    found.sort()
    shown = [_read_output(relative, path, budget) for relative, path in found[:OUTPUT_FILES_LIMIT]]
    return tuple(shown), max(0, len(found) - OUTPUT_FILES_LIMIT)


def _read_output(relative: str, path: Path, budget: Budget) -> OutputFile:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return OutputFile(relative, 0, "symlink", os.readlink(path))
    if not stat.S_ISREG(info.st_mode):
        return OutputFile(relative, info.st_size, "binary")
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    text = _as_text(head, complete=len(head) == info.st_size)
    if text is None:
        return OutputFile(relative, info.st_size, "binary")
    if budget.left <= 0:
        return OutputFile(relative, info.st_size, "over-budget")
    shown = text[: min(OUTPUT_TEXT_LIMIT, budget.left)]
    budget.left -= len(shown)
    truncated = len(shown) < len(text) or len(head) < info.st_size
    return OutputFile(relative, info.st_size, "text", shown, truncated)


def _as_text(head: bytes, complete: bool) -> str | None:
    """``head`` as text, or None for a binary file (NUL bytes, or not UTF-8)."""
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as error:
        # A cut through a multi-byte character at the sniffing limit is still text.
        if not complete and error.start >= len(head) - 3:
            return head[: error.start].decode("utf-8")
        return None


