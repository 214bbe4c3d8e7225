"""The ``*.scenario.yaml`` format: loading, validation, and the Scenario object.

The file is read with YAML line marks and validated against the shipped
JSON Schema (``schemas/scenario.schema.json``); every problem is a
:class:`ScenarioError` naming the file, the line and the key (an unknown key
never passes silently; a near miss gets a "did you mean").  A file holding
``scenarios: [...]`` gives one :class:`Scenario` each, its other top-level
keys acting as defaults for every one of them.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from . import yamlguard
from .docpath import DocPath, dotted, nearest_line, type_mismatch, unknown_schema_key
from .errors import LocatedError
from .filenames import SCENARIO_SUFFIX
from .files import MIB, FileReadError, read_limited
from .harness.conversation import Conversation, UserTurn
from .harness.turns import DEFAULT_MAX_TURNS, ScriptedTurn, scripted_turn
from .scenario_schema import SCHEMA_PATH as SCHEMA_PATH
from .scenario_schema import scenario_schema as scenario_schema

if TYPE_CHECKING:
    from .repository import SkillRepository

#: The largest scenario file read (inputs may be inlined as base64).
MAX_SCENARIO_BYTES = 16 * MIB


class ScenarioError(LocatedError):
    """A scenario file that cannot be used: ``file:line: what is wrong and how to fix it``."""


@dataclass(frozen=True)
class Scenario:
    """One conversation to replay and what to expect of it."""

    name: str
    path: Path
    #: The one user message; None when the conversation is given as :attr:`turns`.
    user: str | None
    skills: tuple[str, ...] | None = None
    runtime: str | None = None
    inputs: dict[str, str | bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    dynamic_tools: bool = False
    exec_tools: bool = False
    max_turns: int = DEFAULT_MAX_TURNS
    script: tuple[ScriptedTurn, ...] | None = None
    cassette: Path | None = None
    model_name: str | None = None
    transport: str | None = None
    allow_unused: bool = False
    match_ignore: tuple[str, ...] = ()
    expect: dict[str, Any] = field(default_factory=dict)
    #: A conversation of several user messages (``turns:``), each with its own script or
    #: none (then :attr:`script` / :attr:`cassette` serve the whole conversation).
    turns: tuple[UserTurn, ...] | None = None
    load_mode: str | None = None
    #: Line of each key, relative to this scenario's own mapping (``("expect", "final")``).
    lines: dict[DocPath, int] = field(default_factory=dict, compare=False, repr=False)
    line: int = 1

    @property
    def directory(self) -> Path:
        return self.path.parent

    def line_of(self, *doc_path: Any) -> int:
        """The line of ``doc_path``, or of its nearest ancestor that has one."""
        return nearest_line(self.lines, doc_path) or self.line

    def where(self, *doc_path: Any) -> str:
        return f"{self.path}:{self.line_of(*doc_path)}"

    def conversation(self, repository: SkillRepository, title: str = "") -> Conversation:
        """The conversation this scenario runs on ``repository`` (its ``skills:`` resolved);
        an unmet expectation is shown at its line of the file, under ``title``."""
        # Every field of the scenario that a Conversation has too (user, turns, script,
        # tools, expect...) means the same there: it is handed on as it is.
        names = {each.name for each in fields(Conversation)}
        shared = {name: value for name, value in vars(self).items() if name in names}
        return Conversation(
            repository, **shared, where=lambda path: f"line {self.line_of(*path)}", title=title
        )


def load_scenarios(path: Path | str) -> list[Scenario]:
    """Every scenario of a ``*.scenario.yaml`` file; raises :class:`ScenarioError`."""
    path = Path(path)
    try:
        text = read_limited(path, limit=MAX_SCENARIO_BYTES, what="scenario file").decode("utf-8")
    except FileReadError as error:
        raise ScenarioError(path, None, error.reason) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(path, None, f"cannot read the scenario file: {error}") from None
    return parse_scenarios(text, path)


def parse_scenarios(text: str, path: Path) -> list[Scenario]:
    data, lines = _compose(text, path)
    if not isinstance(data, dict):
        raise ScenarioError(
            path, 1, "a scenario file must be a YAML mapping with at least 'user:' and 'model:'"
        )
    _validate(data, lines, path)
    _check_patterns(data, lines, path)
    if "scenarios" not in data:
        return [_build(data, lines, (), path, path.name.removesuffix(SCENARIO_SUFFIX))]
    defaults = {key: value for key, value in data.items() if key != "scenarios"}
    scenarios = []
    for index, entry in enumerate(data["scenarios"]):
        if "scenarios" in entry:
            raise ScenarioError(
                path, lines.get(("scenarios", index, "scenarios")), "'scenarios' cannot be nested"
            )
        merged = {**defaults, **entry}
        default_name = f"{path.name.removesuffix(SCENARIO_SUFFIX)}[{index}]"
        scenarios.append(_build(merged, lines, ("scenarios", index), path, default_name))
    names = [scenario.name for scenario in scenarios]
    for index, name in enumerate(names):
        if name in names[:index]:
            raise ScenarioError(
                path,
                scenarios[index].line,
                f"two scenarios are named {name!r}; names must be unique",
            )
    return scenarios


def _compose(text: str, path: Path) -> tuple[Any, dict[DocPath, int]]:
    """The document and the 1-based line of every key and item."""
    loader = yamlguard.LOADER(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            yamlguard.check_aliases(node, allow_recursive=False)
        data = loader.construct_document(node) if node is not None else None
    except yamlguard.AliasExpansionError as error:
        raise ScenarioError(
            path,
            error.problem_mark.line + 1 if error.problem_mark is not None else None,
            f"refused: {error.problem}; write the values out instead of repeating aliases",
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ScenarioError(
            path, line, f"not valid YAML: {error.problem or error.context}"
        ) from None
    except yaml.YAMLError as error:
        raise ScenarioError(path, None, f"not valid YAML: {error}") from None
    finally:
        loader.dispose()
    lines: dict[DocPath, int] = {}
    if node is not None:
        _walk(node, (), lines, path)
    return data, lines


def _walk(node: yaml.Node, doc_path: DocPath, lines: dict[DocPath, int], path: Path) -> None:
    lines.setdefault(doc_path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                raise ScenarioError(
                    path,
                    key_node.start_mark.line + 1,
                    f"the key {key!r} appears twice in the same mapping; YAML would keep only the"
                    " last one. Remove the duplicate.",
                )
            seen.add(key)
            key_path = (*doc_path, key)
            lines[key_path] = key_node.start_mark.line + 1
            _walk(value_node, key_path, lines, path)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*doc_path, index), lines, path)


def _validate(data: dict[str, Any], lines: dict[DocPath, int], path: Path) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = Draft202012Validator(scenario_schema())
    error = best_match(validator.iter_errors(data))
    if error is None:
        return
    doc_path = tuple(error.absolute_path)
    where = dotted(doc_path) or "the scenario"
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        key_path, message = unknown_schema_key(error, lines, where)
        raise ScenarioError(path, lines.get(key_path), message)
    line = lines.get(doc_path) or 1
    if error.validator == "required":
        message = f"{where}: {error.message.replace('is a required property', 'is required')}"
    elif error.validator == "not" and doc_path[-1:] == ("model",):
        message = _EXACTLY_ONE_MODEL.format(where=where)
    elif error.validator == "anyOf" and _is_turn(doc_path):
        message = f"{where}: a script turn needs 'call' (with 'args'), 'calls' or 'say'"
    elif error.validator == "not" and _is_turn(doc_path):
        message = f"{where}: a script turn has either 'call' or 'calls', not both"
    elif error.validator == "dependentRequired":
        message = f"{where}: 'args' belongs to a 'call' (write call: <tool name> above it)"
    elif error.validator == "enum":
        choices = ", ".join(str(choice) for choice in error.validator_value)
        message = f"{where}: {instance!r} is not one of: {choices}"
    elif error.validator == "type":
        message = f"{where}: {type_mismatch(error.validator_value, instance, yaml=True)}"
    else:
        message = f"{where}: {error.message}"
    raise ScenarioError(path, line, message)


_EXACTLY_ONE_MODEL = "{where}: give exactly one of 'script' (scripted turns) or 'cassette' (a file)"


def _check_patterns(data: dict[str, Any], lines: dict[DocPath, int], path: Path) -> None:
    """A :class:`ScenarioError` at its line for a ``matches`` that is no regular expression."""
    from .harness.expect import invalid_patterns

    for prefix, expect in _expect_blocks(data):
        for doc_path, problem in invalid_patterns(expect):
            where = (*prefix, *doc_path)
            raise ScenarioError(path, nearest_line(lines, where), f"{dotted(where)}: {problem}")


def _expect_blocks(data: dict[str, Any]) -> Iterator[tuple[DocPath, dict[str, Any]]]:
    """Every ``expect`` of the file: of each scenario and of each of its turns."""
    entries: list[tuple[DocPath, dict[str, Any]]] = [((), data)]
    entries += [(("scenarios", i), entry) for i, entry in enumerate(data.get("scenarios", []))]
    for prefix, entry in entries:
        blocks: list[tuple[DocPath, Any]] = [((*prefix, "expect"), entry.get("expect"))]
        blocks += [
            ((*prefix, "turns", index, "expect"), turn.get("expect"))
            for index, turn in enumerate(entry.get("turns", []))
        ]
        yield from ((where, block) for where, block in blocks if isinstance(block, dict))


def _is_turn(doc_path: DocPath) -> bool:
    """A model turn of a script: ``model.script[i]`` or ``turns[j].script[i]``."""
    return len(doc_path) >= 2 and doc_path[-2] == "script" and isinstance(doc_path[-1], int)


def _build(
    data: dict[str, Any],
    all_lines: dict[DocPath, int],
    prefix: DocPath,
    path: Path,
    default_name: str,
) -> Scenario:
    lines = {
        key[len(prefix) :]: line for key, line in all_lines.items() if key[: len(prefix)] == prefix
    }
    if prefix:
        # Defaults given at the top of a multi-scenario file keep their own lines.
        own_keys = {key[0] for key in lines if key}
        for key, line in all_lines.items():
            if key and key[0] != "scenarios" and key[0] not in own_keys:
                lines.setdefault(key, line)
    start = lines.get((), 1)
    turns = _user_turns(data, lines, path, start, dotted(prefix) or "the scenario")
    model = _model(data, lines, path, start, prefix, turns)
    skills = data.get("skills")

    def script_of(entries: list[Any], *doc_path: Any) -> tuple[ScriptedTurn, ...]:
        return tuple(
            scripted_turn(entry, f"{path.name}:{lines.get((*doc_path, index), start)}")
            for index, entry in enumerate(entries)
        )

    return Scenario(
        name=data.get("name", default_name),
        path=path,
        line=start,
        user=data.get("user"),
        turns=None
        if turns is None
        else tuple(
            UserTurn(
                turn["user"],
                script_of(turn["script"], "turns", index, "script") if "script" in turn else None,
                turn.get("expect"),
            )
            for index, turn in enumerate(turns)
        ),
        skills=(skills,)
        if isinstance(skills, str)
        else (tuple(skills) if skills is not None else None),
        runtime=data.get("runtime"),
        inputs=dict(
            _input(name, value, path, lines.get(("inputs", name), start))
            for name, value in (data.get("inputs") or {}).items()
        ),
        env={name: _env_value(value) for name, value in (data.get("env") or {}).items()},
        tools=dict(data.get("tools") or {}),
        dynamic_tools=bool(data.get("dynamic_tools", False)),
        exec_tools=bool(data.get("exec_tools", False)),
        max_turns=int(data.get("max_turns", DEFAULT_MAX_TURNS)),
        script=script_of(model["script"], "model", "script") if "script" in model else None,
        cassette=(path.parent / model["cassette"]) if "cassette" in model else None,
        model_name=model.get("name"),
        transport=model.get("transport"),
        allow_unused=bool(model.get("allow_unused", False)),
        match_ignore=tuple(model.get("match_ignore", ())),
        expect=dict(data.get("expect") or {}),
        load_mode=data.get("load_mode"),
        lines=lines,
    )


def _user_turns(
    data: dict[str, Any], lines: dict[DocPath, int], path: Path, start: int, where: str
) -> list[dict[str, Any]] | None:
    """The ``turns:`` list, checked against ``user:`` (exactly one of them)."""
    if "turns" in data and "user" in data:
        raise ScenarioError(
            path,
            lines.get(("turns",), start),
            f"{where}: give either 'user' (one user message) or 'turns' (a conversation of"
            " several), not both",
        )
    if "user" not in data and "turns" not in data:
        raise ScenarioError(
            path,
            start,
            f"{where}: 'user' is required (the user message that starts the conversation), or"
            " 'turns' for a conversation of several user messages",
        )
    return data.get("turns")


def _model(
    data: dict[str, Any],
    lines: dict[DocPath, int],
    path: Path,
    start: int,
    prefix: DocPath,
    turns: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The ``model:`` mapping, checked against the turns' own scripts: the model turns come
    from model.script, model.cassette, or a script in every turn."""
    model = data.get("model") or {}
    own = [turn for turn in turns or () if "script" in turn]
    if turns is not None and own:
        source = next((key for key in ("script", "cassette") if key in model), None)
        if source is not None:
            raise ScenarioError(
                path,
                lines.get(("model", source), start),
                f"{dotted((*prefix, 'model', source))}: the turns have their own scripts; give"
                " the model turns either in each turn's 'script' or in model.script /"
                " model.cassette, not both",
            )
        missing = next((i for i, turn in enumerate(turns) if "script" not in turn), None)
        if missing is not None:
            raise ScenarioError(
                path,
                lines.get(("turns", missing), start),
                f"{dotted((*prefix, 'turns', missing))}: 'script' is required, as the other"
                " turns have one (or give model.script / model.cassette for the whole"
                " conversation)",
            )
        return model
    if "model" not in data:
        raise ScenarioError(
            path,
            start,
            f"{dotted(prefix) or 'the scenario'}: 'model' is required (model: {{script: [...]}}"
            " or model: {cassette: file.json}"
            + (", or a 'script' in each turn)" if turns is not None else ")"),
        )
    if "script" not in model and "cassette" not in model:
        raise ScenarioError(
            path,
            lines.get(("model",), start),
            _EXACTLY_ONE_MODEL.format(where=dotted((*prefix, "model"))),
        )
    return model


def _input(name: Any, value: Any, path: Path, line: int) -> tuple[str, str | bytes]:
    """An input's name and content.  A bad name is refused at collection, as the workspace
    would refuse it at the first run (where the error would only reach the model as a failed
    tool call)."""
    from .workspace.errors import WorkspaceError
    from .workspace.requests import input_name

    try:
        name = input_name(name)
    except WorkspaceError as error:
        raise ScenarioError(path, line, f"inputs: {error}") from None
    if isinstance(value, str):
        return name, value
    try:
        return name, base64.b64decode(value["base64"], validate=True)
    except (binascii.Error, ValueError):
        raise ScenarioError(path, line, "inputs: the base64 content does not decode") from None


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
