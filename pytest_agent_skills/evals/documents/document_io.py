"""Reading and writing the documents: one located JSON reader (a file that is not its
document is refused with the file, the JSON path, what was expected and what was found) and
one writer (``$schema`` first, the fields as the model holds them, written atomically)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from ...docpath import DocPath, dotted, kind_of
from ...errors import LocatedError
from ...files import write_atomic
from ...typed_documents import Document, schema_uri

D = TypeVar("D", bound=Document)
T = TypeVar("T")


class DocumentError(LocatedError):
    """An eval document that cannot be read as what it should be: ``path[:line]: where:
    expected ..., found ...``."""


def load_json(path: Path) -> Any:
    """The JSON value of ``path``; :class:`DocumentError` (with the line) when it is not
    UTF-8 JSON or cannot be read."""
    return _load(path)[1]


def _load(path: Path) -> tuple[str, Any]:
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise DocumentError(path, None, f"cannot be read: {error.strerror or error}") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DocumentError(path, line, "is not UTF-8 text") from error
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as error:
        raise DocumentError(
            path, error.lineno, f"is not valid JSON: {error.msg} (column {error.colno})"
        ) from error


def parse_document(model: type[D], value: Any, path: Path, text: str | None = None) -> D:
    """``value`` (read from ``path``, whose ``text`` it is) as ``model``, strictly as JSON
    (``"yes"`` is no boolean, ``"3"`` no number); :class:`DocumentError` naming the first field
    that does not match."""
    try:
        return model.model_validate_json(text or json.dumps(value), strict=True)
    except ValidationError as error:
        problem = _first_problem(model.NAME, model.model_json_schema(), error, value)
        raise DocumentError(path, None, problem) from None


def parse_part(adapter: TypeAdapter[T], value: Any, path: Path, name: str, where: DocPath) -> T:
    """``value``, found at ``where`` in the ``name`` document at ``path``, read as what
    ``adapter`` types (a part the document keeps as sent, read by a reader that needs its
    shape); :class:`DocumentError` naming the first field that does not match."""
    try:
        return adapter.validate_python(value, strict=True)
    except ValidationError as error:
        problem = _first_problem(name, adapter.json_schema(), error, value, where)
        raise DocumentError(path, None, problem) from None


def read_document(model: type[D], path: Path) -> D:
    """The document at ``path``, read as ``model``."""
    text, value = _load(path)
    return parse_document(model, value, path, text)


def document_bytes(document: Document) -> bytes:
    """The file's bytes: ``$schema`` first, then the fields that were set, indented."""
    body = document.model_dump(mode="json", by_alias=True, exclude_unset=True)
    body.pop("$schema", None)
    text = json.dumps({"$schema": schema_uri(document.NAME), **body}, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def write_document(path: Path, document: Document) -> None:
    """``document`` written to ``path`` whole or not at all."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, document_bytes(document))


def write_data(path: Path, model: type[Document], data: dict[str, Any]) -> None:
    """``data`` checked as ``model`` and written: a writer that builds its document as plain
    values still writes only what the schema allows."""
    try:
        document = model.model_validate(data)
    except ValidationError as error:  # a bug of the writer, never of the user's input
        problem = _first_problem(model.NAME, model.model_json_schema(), error, data)
        raise AssertionError(f"{path}: {problem}") from error
    write_document(path, document)


_EXPECTED = {
    "extra_forbidden": "no such field",
    "dict_type": "an object",
    "model_type": "an object",
    "list_type": "a list",
    "tuple_type": "a list",
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "too_short": "",
    "too_long": "",
}


def _first_problem(
    name: str, schema: dict[str, Any], error: ValidationError, value: Any, within: DocPath = ()
) -> str:
    problem = error.errors(include_url=False)[0]
    located = _in_document(problem["loc"], value)
    where = dotted((*within, *located))
    if problem["type"] == "missing":
        expected = f"{_kind_at(schema, located)} (the field is required)"
    else:
        expected = _expected(problem["type"], problem.get("ctx") or {}) or (
            problem["msg"][0].lower() + problem["msg"][1:]
        )
    found = "nothing" if problem["type"] == "missing" else kind_of(problem.get("input"))
    return f"{where or 'the top level'}: expected {expected}, found {found} (not a {name} document)"


def _expected(kind: str, context: dict[str, Any]) -> str:
    if kind == "literal_error":
        return f"one of {context['expected']}"
    if kind == "string_pattern_mismatch":
        return f"a name matching {context['pattern']}"
    return _EXPECTED.get(kind, "")


def _in_document(location: tuple[int | str, ...], value: Any) -> DocPath:
    """The part of an error's location that is in the document: pydantic puts the name of
    a union's branch (``str``, ``list[float]``, a model's name) where a value was not of it."""
    kept: list[int | str] = []
    for position, part in enumerate(location):
        if isinstance(value, dict) and isinstance(part, str):
            if part in value or position == len(location) - 1:  # the last: a missing field
                kept.append(part)
                value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            kept.append(part)
            value = value[part]
    return tuple(kept)


#: What a JSON Schema type is, as a message says what it expected.
_KINDS = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
}


def _kind_at(schema: dict[str, Any], location: DocPath) -> str:
    """What the schema wants at ``location`` (a field that is missing): ``an integer``."""
    definitions = schema.get("$defs", {})
    node = _resolved(schema, definitions)
    for part in location:
        if isinstance(part, int):
            node = node.get("items") or {}
        else:
            node = node.get("properties", {}).get(part) or node.get("additionalProperties") or {}
        node = _resolved(node, definitions)
    return _KINDS.get(node.get("type", ""), "a value")


def _resolved(node: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its reference followed and a lone non-null branch taken."""
    while isinstance(node, dict):
        if "$ref" in node:
            node = definitions.get(node["$ref"].rsplit("/", 1)[-1], {})
            continue
        branches = [item for item in node.get("anyOf", ()) if item.get("type") != "null"]
        if len(branches) != 1:
            return node
        node = branches[0]
    return {}
