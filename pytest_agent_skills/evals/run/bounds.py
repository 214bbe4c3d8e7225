"""The bounds of what an eval run writes beside its workspace: ``outputs/`` and
``transcript.json`` (the cassette's is the harness's: ``MAX_CASSETTE_BYTES``).

The model decides how much its commands write and how long its answers are; a run folder is
kept to these bounds, and each bound that is hit is a note of the run (``runs[].notes``),
never a silent cut.
"""

from __future__ import annotations

import json
from typing import Any

from ...files import MIB
from ...harness.trajectory import FILE_CAPTURE_LIMIT
from ...workspace.result import INLINE_TOTAL_CAP_BYTES, MAX_OUTPUT_FILES

#: The most bytes of ``outputs/`` kept, all files together (a run's inline output cap).
OUTPUTS_CAP_BYTES = INLINE_TOTAL_CAP_BYTES
#: The largest ``transcript.json`` written.
TRANSCRIPT_CAP_BYTES = 16 * MIB
#: The shortest a text of the transcript is cut to, whatever its count.
_SHORTEST_CUT = 256


def bounded_outputs(files: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """The files under ``out/`` (by path below it) kept for ``outputs/``: in path order, at
    most :data:`MAX_OUTPUT_FILES` and :data:`OUTPUTS_CAP_BYTES` together; and the notes."""
    found = sorted(
        (name[len("out/") :], content) for name, content in files.items() if name.startswith("out/")
    )
    kept: dict[str, bytes] = {}
    notes: list[str] = []
    left_out: list[str] = []
    total = 0
    for name, content in found:
        if len(kept) >= MAX_OUTPUT_FILES or total + len(content) > OUTPUTS_CAP_BYTES:
            left_out.append(name)
            continue
        kept[name] = content
        total += len(content)
        if len(content) >= FILE_CAPTURE_LIMIT:
            notes.append(
                f"outputs/{name}: kept its first {FILE_CAPTURE_LIMIT} bytes, the limit of a"
                f" file captured from the workspace ({FILE_CAPTURE_LIMIT // MIB} MiB)"
            )
    if left_out:
        shown = ", ".join(left_out[:5]) + (", ..." if len(left_out) > 5 else "")
        notes.append(
            f"outputs/: {len(left_out)} of the {len(found)} files of out/ left out ({shown}):"
            f" a run keeps at most {MAX_OUTPUT_FILES} files and {OUTPUTS_CAP_BYTES} bytes"
            f" ({OUTPUTS_CAP_BYTES // MIB} MiB) of them"
        )
    return kept, notes


def bounded_transcript(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``document`` (transcript.json) within :data:`TRANSCRIPT_CAP_BYTES`: when over, its
    longest texts are cut (each marked where) until it fits; and the note saying so."""
    size = _size(document)
    if size <= TRANSCRIPT_CAP_BYTES:
        return document, []
    cut_to = TRANSCRIPT_CAP_BYTES // 4
    smaller = _cut_texts(document, cut_to)
    while _size(smaller) > TRANSCRIPT_CAP_BYTES and cut_to > _SHORTEST_CUT:
        cut_to //= 2
        smaller = _cut_texts(document, cut_to)
    note = (
        f"transcript.json: {size} bytes, over the limit of {TRANSCRIPT_CAP_BYTES} bytes"
        f" ({TRANSCRIPT_CAP_BYTES // MIB} MiB) of a transcript; its texts over {cut_to}"
        " characters are cut, each marked where"
    )
    return smaller, [note]


def json_file_bytes(data: Any) -> bytes:
    """The bytes of a JSON file of the output folder, as they are written (and measured)."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _size(document: Any) -> int:
    # Measured as written, so the bound is the size of the file on disk.
    return len(json_file_bytes(document))


def _cut_texts(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + f" [... {len(value) - limit} more characters cut: transcript limit]"
    if isinstance(value, dict):
        return {key: _cut_texts(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_texts(item, limit) for item in value]
    return value
