"""How the grader asks for its JSON answer, negotiated with each endpoint.

Endpoints accept different subsets of ``response_format``: OpenAI, vLLM and Gemini's
compatible endpoint take a JSON schema (``json_schema``); llama.cpp's Python server takes only
``json_object`` (with a ``schema`` beside it, which it enforces); some take neither.  The
grader asks in the strongest mode first; an endpoint that refuses a mode for good (see
:func:`~.transport.final_rejection`) is asked in the next one, down to ``text`` (no
``response_format``: the JSON object is taken from the reply); when it refuses all three,
the first refusal is the error (it was not about the mode).  The mode that worked is kept,
per endpoint and grader model, for the rest of the process, and named in benchmark.json's
``metadata.grader_output``.

A replay asks in the mode its cassette was recorded in, so that it rebuilds the same
benchmark with no endpoint to negotiate with.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

#: The modes, strongest first.
MODES = ("json_schema", "json_object", "text")


def response_format(mode: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` field of a grading request in ``mode`` (None: no field)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "grading", "strict": True, "schema": dict(schema)},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": dict(schema)}
    return None


def mode_of(body: Any) -> str | None:
    """The mode of a grading request ``body`` as recorded, or None if it is not one."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    shape = body.get("response_format")
    if shape is None:
        return "text"
    kind = shape.get("type") if isinstance(shape, dict) else None
    return kind if kind in MODES else None


def recorded_mode(bodies: Iterable[Any]) -> str | None:
    """The mode of the first recorded grading request among ``bodies``, or None."""
    for body in bodies:
        mode = mode_of(body)
        if mode is not None:
            return mode
    return None


def weakest(modes: Iterable[str | None]) -> str | None:
    """The weakest of the modes the gradings of an eval used (None: no grading asked)."""
    used = [mode for mode in modes if mode in MODES]
    return max(used, key=MODES.index) if used else None


class NegotiatedModes:
    """The mode each endpoint and grader model was last found to accept (thread-safe)."""

    def __init__(self) -> None:
        self._modes: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def current(self, endpoint: str, model: str) -> str:
        with self._lock:
            return self._modes.get((endpoint, model), MODES[0])

    def worked(self, endpoint: str, model: str, mode: str) -> None:
        """``mode`` worked after a stronger one was refused: it is kept (runs at once may
        find it in turn; the mode only ever goes down)."""
        with self._lock:
            kept = self._modes.get((endpoint, model), MODES[0])
            if MODES.index(mode) > MODES.index(kept):
                self._modes[(endpoint, model)] = mode


#: The modes found in this process.
NEGOTIATED = NegotiatedModes()
