"""JSON read from the eval output folder with where each value came from: a value of the
wrong kind names its file and JSON path (:class:`ReportError`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import LocatedError
from ..documents.document_io import DocumentError, load_json


class ReportError(LocatedError):
    """The eval output folder cannot be read: ``path[:line]: what is wrong``."""


@dataclass(frozen=True)
class Node:
    """A JSON value with where it came from, so a wrong field names its file and path."""

    value: Any
    file: Path
    where: str

    def fail(self, message: str) -> ReportError:
        return ReportError(self.file, None, f"{self.where or 'the top level'}: {message}")

    def _expect(self, types: type | tuple[type, ...], what: str) -> Any:
        value = self.value
        if isinstance(value, bool) and bool not in (
            types if isinstance(types, tuple) else (types,)
        ):
            raise self.fail(f"expected {what}, found {describe(value)}")
        if not isinstance(value, types):
            raise self.fail(f"expected {what}, found {describe(value)}")
        return value

    def child(self, key: str | int) -> Node:
        if isinstance(key, int):
            return Node(self._expect(list, "a list")[key], self.file, f"{self.where}[{key}]")
        where = f"{self.where}.{key}" if self.where else key
        return Node(self._expect(dict, "an object").get(key), self.file, where)

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and self.value.get(key) is not None

    def obj(self) -> Node:
        self._expect(dict, "an object")
        return self

    def items(self) -> Iterator[Node]:
        values = self._expect(list, "a list")
        for index in range(len(values)):
            yield self.child(index)

    def text(self) -> str:
        return str(self._expect(str, "a string"))

    def integer(self) -> int:
        return int(self._expect(int, "an integer"))

    def number(self) -> float:
        return float(self._expect((int, float), "a number"))

    def flag(self) -> bool:
        return bool(self._expect(bool, "true or false"))

    def opt_text(self, key: str, default: str = "") -> str:
        return self.child(key).text() if self.has(key) else default

    def opt_int(self, key: str, default: int = 0) -> int:
        return self.child(key).integer() if self.has(key) else default

    def opt_number(self, key: str, default: float = 0.0) -> float:
        return self.child(key).number() if self.has(key) else default


def describe(value: Any) -> str:
    if value is None:
        return "nothing (null or absent)"
    return f"{type(value).__name__} {json.dumps(value)[:60]}"


def load_node(path: Path) -> Node:
    """The JSON of ``path`` to read field by field; :class:`ReportError` (with the line)
    when it is not UTF-8 JSON or cannot be read."""
    try:
        return Node(load_json(path), path, "")
    except DocumentError as error:
        raise ReportError(error.path, error.line, error.message) from None


def object_items(node: Node) -> Iterator[tuple[str, Node]]:
    for key in node.value:
        yield str(key), node.child(str(key))
