"""A skill's eval files: ``evals/evals.json`` and ``evals/triggers.json``, read and checked.

Both files are skill-creator's (its ``references/schemas.md``): an eval is a prompt, input
files staged into ``work/inputs/`` and expectations; a string expectation is graded by the
grader model, an object one is checked by code with the scenario ``expect:`` keys.  Every
problem is an :class:`EvalFileError` naming the file, the line and the fix.
"""

from __future__ import annotations

import bisect
import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ...errors import LocatedError
from ...files import MIB, FileReadError, OutsideFolderError, check_inside, read_inside, read_limited

EVALS_FILE = PurePosixPath("evals/evals.json")
TRIGGERS_FILE = PurePosixPath("evals/triggers.json")
#: The largest eval file read.
MAX_EVAL_FILE_BYTES = 8 * MIB
#: The largest input file staged for an eval (as large as a scenario file's inline inputs).
MAX_EVAL_INPUT_BYTES = 16 * MIB
INPUT_WHAT = "staged input file"
_SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"

DocPath = tuple[Any, ...]


class EvalFileError(LocatedError):
    """An ``evals.json`` or ``triggers.json`` that cannot be used: ``path:line: problem``."""


@dataclass(frozen=True)
class EvalCase:
    """One eval of ``evals.json``."""

    id: int
    prompt: str
    name: str = ""
    #: Input files, relative to the skill root, staged into ``work/inputs/`` by their name.
    files: tuple[str, ...] = ()
    #: Strings (graded by the grader model) and ``expect:`` mappings (checked by code).
    expectations: tuple[str | Mapping[str, Any], ...] = field(default=(), compare=False)
    line: int = 0

    @property
    def title(self) -> str:
        return self.name or f"eval {self.id}"

    @property
    def graded(self) -> list[str]:
        """The expectations the grader model grades."""
        return [item for item in self.expectations if isinstance(item, str)]


@dataclass(frozen=True)
class EvalSet:
    path: Path
    skill_name: str
    evals: tuple[EvalCase, ...]


@dataclass(frozen=True)
class TriggerQuery:
    query: str
    should_trigger: bool
    line: int = 0


def load_evals(skill_dir: Path, skill_name: str) -> EvalSet:
    """The evals of the skill at ``skill_dir`` named ``skill_name``; an :class:`EvalFileError`
    for a file that is not valid JSON, does not follow the schema, names another skill,
    repeats an id or lists an input file that is not there."""
    path = skill_dir / EVALS_FILE
    data, lines = _read(path, "evals.schema.json")
    if data["skill_name"].strip() != skill_name:
        raise EvalFileError(
            path,
            lines.get(("skill_name",)),
            f"skill_name {data['skill_name']!r} is not the name of the skill in {skill_dir}"
            f' ({skill_name!r}); write "skill_name": {json.dumps(skill_name)}',
        )
    seen: dict[int, int] = {}
    cases = []
    for index, entry in enumerate(data["evals"]):
        where = ("evals", index)
        line = lines.get(where, 1)
        if entry["id"] in seen:
            raise EvalFileError(
                path,
                lines.get((*where, "id")),
                f"evals[{index}].id {entry['id']} is already the id of the eval at line"
                f" {seen[entry['id']]}; give every eval its own integer id",
            )
        seen[entry["id"]] = line
        expectations = _expectations(entry, path, lines, where)
        files = tuple(
            _input_file(skill_dir, name, path, lines.get((*where, "files", number)))
            for number, name in enumerate(entry.get("files", ()))
        )
        staged = [PurePosixPath(name).name for name in files]
        twice = next((name for name in staged if staged.count(name) > 1), None)
        if twice is not None:
            raise EvalFileError(
                path,
                lines.get((*where, "files")),
                f"evals[{index}].files: two input files are named {twice!r}, and both would be"
                f" work/inputs/{twice}; rename one of them",
            )
        cases.append(
            EvalCase(
                id=entry["id"],
                prompt=entry["prompt"],
                name=entry.get("name", ""),
                files=files,
                expectations=expectations,
                line=line,
            )
        )
    return EvalSet(path, skill_name, tuple(cases))


def load_triggers(skill_dir: Path) -> list[TriggerQuery]:
    """The trigger queries of ``evals/triggers.json``; an :class:`EvalFileError` when bad."""
    path = skill_dir / TRIGGERS_FILE
    data, lines = _read(path, "triggers.schema.json")
    return [
        TriggerQuery(entry["query"], entry["should_trigger"], lines.get((index,), 1))
        for index, entry in enumerate(data)
    ]


def _expectations(
    entry: Mapping[str, Any], path: Path, lines: dict[DocPath, int], where: DocPath
) -> tuple[str | Mapping[str, Any], ...]:
    from ...docpath import dotted, nearest_line
    from ...harness.expect import invalid_patterns

    if "expectations" in entry and "assertions" in entry:
        raise EvalFileError(
            path,
            lines.get((*where, "assertions")),
            f"{dotted(where)} has both 'expectations' and 'assertions' (two spellings of one"
            " list); merge them into 'expectations'",
        )
    key = "assertions" if "assertions" in entry else "expectations"
    if key not in entry:
        raise EvalFileError(
            path,
            lines.get(where),
            f"{dotted(where)} has no 'expectations': add a list of statements the grader checks"
            ' ("The answer gives the mean") or expect: mappings ({"files": [...]})',
        )
    for number, item in enumerate(entry[key]):
        if isinstance(item, Mapping):
            for doc_path, problem in invalid_patterns(item):
                full = (*where, key, number, *doc_path)
                line = nearest_line(lines, full, root=True)
                raise EvalFileError(path, line, f"{dotted(full)}: {problem}")
    return tuple(entry[key])


def _input_file(skill_dir: Path, name: str, path: Path, line: int | None) -> str:
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts:
        raise EvalFileError(
            path,
            line,
            f"input file {name!r} must be a path inside the skill folder, relative to it"
            " (e.g. evals/files/data.csv)",
        )
    try:
        check_inside(skill_dir, str(relative), limit=MAX_EVAL_INPUT_BYTES, what=INPUT_WHAT)
    except OutsideFolderError:
        link, target = _link_out(skill_dir, relative)
        raise EvalFileError(
            path,
            line,
            f"input file {name!r}: {link} is a symbolic link to {target}, outside the skill"
            f" folder {skill_dir}; it is not followed (only the skill folder is staged for the"
            " agent). Replace the link with a copy of the file.",
        ) from None
    except FileReadError as error:
        raise EvalFileError(path, line, f"input file {name!r} {error.reason}") from None
    except FileNotFoundError:
        raise EvalFileError(
            path,
            line,
            f"input file {name!r} is not a file in {skill_dir}; add it there, or fix the path"
            " (relative to the skill folder)",
        ) from None
    return relative.as_posix()


def _link_out(skill_dir: Path, relative: PurePosixPath) -> tuple[str, str]:
    """The first link on the way to ``relative`` that leads out of ``skill_dir``, and where."""
    inside = os.path.realpath(skill_dir)
    walked = Path(skill_dir)
    for part in relative.parts:
        walked = walked / part
        target = os.path.realpath(walked)
        if walked.is_symlink() and os.path.commonpath([inside, target]) != inside:
            return str(walked), target
    return str(Path(skill_dir) / relative), os.path.realpath(Path(skill_dir) / relative)


def read_inputs(skill_dir: Path, case: EvalCase) -> dict[str, bytes]:
    """The input files of ``case`` by the name they are staged under (``work/inputs/<name>``),
    read as :func:`load_evals` checked them: inside the skill folder, regular, at most
    :data:`MAX_EVAL_INPUT_BYTES` each (an :class:`EvalFileError` when one changed since)."""
    inputs = {}
    for name in case.files:
        try:
            content = read_inside(skill_dir, name, limit=MAX_EVAL_INPUT_BYTES, what=INPUT_WHAT)
        except FileReadError as error:
            raise EvalFileError(error.path, None, error.reason) from None
        except FileNotFoundError:
            raise EvalFileError(skill_dir / name, None, "the input file is gone") from None
        inputs[PurePosixPath(name).name] = content
    return inputs


def _read(path: Path, schema_name: str) -> tuple[Any, dict[DocPath, int]]:
    try:
        text = read_limited(path, limit=MAX_EVAL_FILE_BYTES, what="eval file").decode("utf-8")
    except FileReadError as error:
        raise EvalFileError(path, None, error.reason) from None
    except FileNotFoundError:
        raise EvalFileError(path, None, "no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise EvalFileError(path, None, f"cannot read the file: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise EvalFileError(
            path, error.lineno, f"not valid JSON: {error.msg} (column {error.colno})"
        ) from None
    except (ValueError, RecursionError) as error:
        raise EvalFileError(path, None, f"not readable JSON: {error}") from None
    lines = json_lines(text)
    _validate(data, lines, path, schema_name)
    return data, lines


def _validate(data: Any, lines: dict[DocPath, int], path: Path, schema_name: str) -> None:
    from jsonschema.exceptions import best_match

    from ...docpath import dotted, nearest_line, type_mismatch, unknown_schema_key

    error = best_match(_validator(schema_name).iter_errors(data))
    if error is None:
        return
    # "not valid under any of the given schemas": say what is wrong in the alternative of
    # the value's own kind (a list of calls, not the mapping form).
    while error.validator in ("anyOf", "oneOf") and error.context:
        relevant = [item for item in error.context if item.validator != "type"]
        if not relevant:
            break
        error = best_match(relevant)
    doc_path = tuple(error.absolute_path)
    where = dotted(doc_path) or "the file"
    instance = error.instance
    line = nearest_line(lines, doc_path, root=True)
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        key_path, message = unknown_schema_key(error, lines, where)
        raise EvalFileError(path, lines.get(key_path, line), message)
    if error.validator == "required":
        message = error.message.replace("is a required property", "is required")
    elif error.validator == "type":
        message = type_mismatch(error.validator_value, instance)
    elif error.validator in ("minItems", "minLength", "minProperties"):
        message = "must not be empty"
    else:
        message = error.message
    raise EvalFileError(path, line, f"{where}: {message}")


@functools.cache
def _validator(schema_name: str) -> Any:
    from jsonschema import Draft202012Validator

    from ...scenario_schema import scenario_schema

    schema = json.loads((_SCHEMAS / schema_name).read_text(encoding="utf-8"))
    # Object expectations are the scenario expect: block: its definitions, by reference.
    schema.setdefault("$defs", {}).update(scenario_schema()["$defs"])
    return Draft202012Validator(schema)


_SPACE = re.compile(r"[ \t\n\r]*")


def json_lines(text: str) -> dict[DocPath, int]:
    """The line (from 1) where each value of the JSON document ``text`` starts, by its path
    (``("evals", 0, "id")``); ``text`` is valid JSON (``json.loads`` read it)."""
    newlines = [match.start() for match in re.finditer("\n", text)]
    decoder = json.JSONDecoder()
    lines: dict[DocPath, int] = {}

    def skip(index: int) -> int:
        match = _SPACE.match(text, index)
        return match.end() if match else index

    def walk(index: int, doc_path: DocPath) -> int:
        index = skip(index)
        lines[doc_path] = bisect.bisect_left(newlines, index) + 1
        opener = text[index]
        if opener not in "{[":
            return int(decoder.raw_decode(text, index)[1])
        closer = "}" if opener == "{" else "]"
        index = skip(index + 1)
        number = 0
        while text[index] != closer:
            if opener == "{":
                key, index = decoder.raw_decode(text, index)
                index = walk(skip(index) + 1, (*doc_path, key))  # past the ':'
            else:
                index = walk(index, (*doc_path, number))
                number += 1
            index = skip(index)
            if text[index] == ",":
                index = skip(index + 1)
        return index + 1

    walk(0, ())
    return lines
