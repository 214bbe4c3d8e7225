"""Reading and writing the documents: one located JSON reader (a file that is not its
document is refused with the file, the JSON path, what was expected and what was found) and
one writer (``$schema`` first, the fields as the model holds them, written atomically)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ...docpath import dotted, kind_of
from ...errors import LocatedError
from ...files import write_atomic
from ...typed_documents import Document, schema_uri

D = TypeVar("D", bound=Document)


class DocumentError(LocatedError):
    """An eval document that cannot be read as what it should be: ``path[:line]: where:
    expected ..., found ...``."""


def load_json(path: Path) -> Any:
    """The JSON value of ``path``; :class:`DocumentError` (with the line) when it is not
    UTF-8 JSON or cannot be read."""
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
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DocumentError(
            path, error.lineno, f"is not valid JSON: {error.msg} (column {error.colno})"
        ) from error


def parse_document(model: type[D], value: Any, path: Path) -> D:
    """``value`` (read from ``path``) as ``model``; :class:`DocumentError` naming the first
    field that does not match."""
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise DocumentError(path, None, _first_problem(model, error)) from None


def read_document(model: type[D], path: Path) -> D:
    """The document at ``path``, read as ``model``."""
    return parse_document(model, load_json(path), path)


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
        raise AssertionError(f"{path}: {_first_problem(model, error)}") from error
    write_document(path, document)


_EXPECTED = {
    "missing": "a value (the field is required)",
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
    "literal_error": "",
    "too_short": "",
    "too_long": "",
}


def _first_problem(model: type[Document], error: ValidationError) -> str:
    problem = error.errors(include_url=False)[0]
    where = dotted(tuple(part for part in problem["loc"] if not _is_branch(part))) or (
        "the top level"
    )
    expected = _EXPECTED.get(problem["type"]) or problem["msg"][0].lower() + problem["msg"][1:]
    found = "nothing" if problem["type"] == "missing" else kind_of(problem.get("input"))
    name = model.NAME or model.__name__
    return f"{where}: expected {expected}, found {found} (not a {name} document)"


def _is_branch(part: Any) -> bool:
    """A union's branch name pydantic puts in an error's location (``list[float]``)."""
    return isinstance(part, str) and any(mark in part for mark in "[(")
