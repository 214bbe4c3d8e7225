"""A run of the output folder read for the report: its ``runs[]`` entry, its grading,
transcript and output files (each shown up to a limit, the page's inlined text within a
budget). The files are read through their models (:mod:`..documents`); the messages a
transcript keeps as sent are read through :class:`ChatMessage`."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from ...typed_documents import Open
from ..documents.benchmark_model import RunEntry
from ..documents.document_io import DocumentError, parse_part, read_document
from ..documents.run_files import GradingDocument, TranscriptDocument
from .values import Message, OutputFile, Run, ToolCall, Transcript

# What one page inlines: enough to read a run, never a page that a browser chokes on.
OUTPUT_TEXT_LIMIT = 20_000  # characters of one output file shown
OUTPUT_FILES_LIMIT = 200  # output files listed per run
_SNIFF_BYTES = 4 * OUTPUT_TEXT_LIMIT + 4


@dataclass
class Budget:
    """Characters of output files the page may still inline."""

    left: int


class ChatFunction(Open):
    name: str
    arguments: Any = None


class ChatToolCall(Open):
    id: str = ""
    function: ChatFunction


class ContentPart(Open):
    type: str = "text"
    text: str = ""


#: A message's content: text, nothing, or OpenAI's list of parts.
Content = str | list[ContentPart] | None


class ChatMessage(Open):
    """A message of transcript.json as sent to the model (OpenAI's chat format: fields the
    page does not show are kept)."""

    role: str
    content: Content = None
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None


_MESSAGES = TypeAdapter(list[ChatMessage])
_CONTENT: TypeAdapter[Content] = TypeAdapter(Content)


def read_run(out_dir: Path, entry: RunEntry, where: str, budget: Budget) -> Run:
    """The run of ``entry`` (``runs[i]`` of benchmark.json, ``where``) with its folder."""
    default_dir = f"eval-{entry.eval_id}/{entry.configuration}/run-{entry.run_number}"
    run_dir = entry.run_dir or default_dir
    folder = _inside(out_dir, run_dir, f"{where}.run_dir")
    expectations = entry.expectations
    if expectations is None and (folder / "grading.json").is_file():
        expectations = read_document(GradingDocument, folder / "grading.json").expectations
    transcript_file = folder / "transcript.json"
    transcript = _read_transcript(transcript_file) if transcript_file.is_file() else None
    outputs, omitted = _read_outputs(folder / "outputs", budget)
    return Run(
        entry=entry,
        eval_name=f"eval {entry.eval_id}" if entry.eval_name is None else entry.eval_name,
        run_dir=run_dir,
        error=entry.error or (transcript.error if transcript else None),
        expectations=tuple(expectations or ()),
        found=folder.is_dir(),
        transcript=transcript,
        outputs=outputs,
        outputs_omitted=omitted,
    )


def _inside(out_dir: Path, relative: str, where: str) -> Path:
    """``out_dir / relative``, refusing a path that leaves the output folder."""
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise DocumentError(
            out_dir / "benchmark.json",
            None,
            f"{where}: {relative!r} is not a folder inside the output folder",
        )
    return out_dir / candidate


def _content_text(content: Content) -> str:
    """A message's content: a string, null, or OpenAI's list of parts (text parts joined)."""
    if content is None or isinstance(content, str):
        return content or ""
    return "\n".join(
        part.text if part.type == "text" else f"[{part.type} part]" for part in content
    )


def _arguments_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return str(value)  # shown as the model sent it
    return json.dumps(value, indent=2, ensure_ascii=False)


def _result_text(text: str) -> str:
    """A tool's result, pretty-printed when it is a JSON object or list (as skill tools answer)."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def _read_transcript(path: Path) -> Transcript:
    document = read_document(TranscriptDocument, path)
    raw = parse_part(_MESSAGES, document.messages, path, document.NAME, ("messages",))
    results = {
        message.tool_call_id: _result_text(_content_text(message.content))
        for message in raw
        if message.role == "tool" and message.tool_call_id is not None
    }
    messages = [
        Message(
            message.role,
            _content_text(message.content),
            tuple(
                ToolCall(
                    call.function.name,
                    _arguments_text(call.function.arguments),
                    results.get(call.id),
                )
                for call in message.tool_calls or ()
            ),
        )
        for message in raw
        if message.role != "tool"  # shown with the call it answers
    ]
    if not raw and "tool_calls" in document.model_fields_set:
        # No messages recorded: the paired calls alone still tell what the agent did.
        calls = []
        for index, call in enumerate(document.tool_calls):
            where = ("tool_calls", index, "result")
            result = parse_part(_CONTENT, call.result, path, document.NAME, where)
            shown = None if result is None else _result_text(_content_text(result))
            calls.append(ToolCall(call.name, _arguments_text(call.arguments), shown))
        messages.append(Message("assistant", "", tuple(calls)))
    return Transcript(
        prompt=document.prompt,
        messages=tuple(messages),
        final_text=document.final_text or "",
        error=document.error,
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
