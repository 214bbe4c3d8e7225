"""What every document model the package writes shares: frozen values, unknown fields
refused, and the ``$schema`` each written document carries (as SARIF does), naming its
schema."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .docpath import schema_uri as schema_uri  # where a document's $schema points

D = TypeVar("D", bound="Document")

#: Versions of the interval fields: ``[low, high]``.
Interval = tuple[float, float]


def schema_field(name: str) -> Any:
    """The ``$schema`` field of a report that always carries it (audit, coverage, tokens,
    mutation, grader-check): ``schema_uri(name)`` by default, read and written as
    ``"$schema"``."""
    return Field(
        default=schema_uri(name),
        alias="$schema",
        description=f"the document's JSON Schema (``agent-skills schema {name}`` prints it)",
    )


class Part(BaseModel):
    """A part of a document: frozen, and a field it does not declare is refused, so a file
    that is not this document (hand-edited, another version) never reads as one."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Open(BaseModel):
    """A part whose fields other tools add to (skill-creator's metadata, the timings): its
    declared fields are typed, others kept as they are."""

    model_config = ConfigDict(frozen=True, extra="allow")


class Document(Part):
    """A whole JSON file; :attr:`NAME` names its schema."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    #: The schema's name: ``schemas/<NAME>.schema.json``.
    NAME: ClassVar[str] = ""

    schema_: str | None = Field(
        default=None,
        alias="$schema",
        description="the document's JSON Schema (absent in files written before it was)",
    )

    def stamped(self: D) -> D:
        """The document as it is written: its ``$schema`` set, so that it equals the file
        read back."""
        return self.model_copy(update={"schema_": schema_uri(self.NAME)})
