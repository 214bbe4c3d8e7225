"""The cassette file as a typed document: what :class:`~.cassette.Cassette` writes, its JSON
Schema shipped in the package (``schemas/cassette.schema.json``). The loader keeps its own
checks and messages (a cassette is read on every replay); this model gives the schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..typed_documents import Document, Part


class RecordedInteraction(Part):
    """One request to the model and the answer it got (redacted)."""

    request: dict[str, Any] = Field(description="method, url, headers, body as sent")
    response: dict[str, Any] = Field(description="status, headers, body (or stream chunks)")


class CassetteDocument(Document):
    """A cassette: a conversation's exchanges with the model, replayed offline."""

    NAME = "cassette"

    format: Literal["pytest-agent-skills cassette"] = "pytest-agent-skills cassette"
    version: Literal[1] = 1
    interactions: list[RecordedInteraction]
