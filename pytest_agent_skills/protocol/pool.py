"""The pool of non-skill tools a session may expose to the model.

A pool tool is a name, a description, a JSON Schema for its parameters and
a callable.  Register a Python function (its schema is derived from the
signature and annotations, or given explicitly), any object carrying
``name``, ``description``, ``parameters`` and a callable, or a stub that
returns a fixed value.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..errors import AgentSkillsError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


class ToolPoolError(AgentSkillsError):
    """A tool could not be registered in (or called through) a :class:`ToolPool`."""


@dataclass(frozen=True)
class PoolTool:
    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]

    def definition(self) -> dict[str, Any]:
        """The OpenAI ``tools=[...]`` entry of this tool."""
        return function_definition(self.name, self.description, self.parameters)

    @cached_property
    def validator(self) -> Validator:
        """The validator of this tool's arguments, built once (building one costs more than
        validating with it)."""
        return schema_validator(self.parameters)

    def __call__(self, **arguments: Any) -> Any:
        return self.function(**arguments)


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A JSON Schema (2020-12) validator of ``schema``."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema)


def function_definition(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


class ToolPool:
    """Tools by name, in registration order."""

    def __init__(self, tools: typing.Iterable[Any] = ()) -> None:
        self._tools: dict[str, PoolTool] = {}
        for tool in tools:
            self.register(tool)

    def register(
        self,
        tool: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> PoolTool:
        """Add a :class:`PoolTool`, a tool object or a plain callable; returns the pool entry."""
        if isinstance(tool, PoolTool):
            entry = tool
        elif (function := _tool_object_function(tool)) is not None:
            entry = PoolTool(
                name or tool.name,
                description if description is not None else tool.description,
                parameters if parameters is not None else dict(tool.parameters),
                function,
            )
        elif callable(tool):
            tool_name = name or getattr(tool, "__name__", "")
            if not tool_name or tool_name == "<lambda>":
                raise ToolPoolError(
                    f"cannot name the tool {tool!r}: pass name='...' when registering a lambda"
                    " or a callable object"
                )
            entry = PoolTool(
                tool_name,
                description if description is not None else _docstring_summary(tool),
                parameters if parameters is not None else schema_from_signature(tool),
                tool,
            )
        else:
            raise ToolPoolError(
                f"cannot register {tool!r} as a tool: give a callable, a PoolTool, or an object"
                " with 'name', 'description', 'parameters' and a callable 'function'"
            )
        return self._add(entry)

    def stub(
        self, name: str, description: str, parameters: dict[str, Any], returns: Any
    ) -> PoolTool:
        """Register a tool that ignores its arguments and returns ``returns``."""
        require_json(name, returns)
        return self._add(PoolTool(name, description, parameters, lambda **_arguments: returns))

    def _add(self, entry: PoolTool) -> PoolTool:
        if entry.name in self._tools:
            raise ToolPoolError(
                f"a tool named {entry.name!r} is already in the pool; tool names must be unique"
            )
        if entry.parameters.get("type") != "object":
            raise ToolPoolError(
                f"the parameters schema of tool {entry.name!r} must be a JSON Schema with"
                f' "type": "object", found {json.dumps(entry.parameters)[:80]}'
            )
        self._tools[entry.name] = entry
        return entry

    def get(self, name: str) -> PoolTool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition() for tool in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[PoolTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def _tool_object_function(tool: Any) -> Callable[..., Any] | None:
    """What a tool object runs: its callable ``function``, else the object itself if callable.

    None when ``tool`` is not a tool object (no ``name``, ``description`` and
    ``parameters``, or nothing to call).
    """
    if not all(hasattr(tool, field) for field in ("name", "description", "parameters")):
        return None
    function: object = getattr(tool, "function", None)
    if callable(function):
        return function
    return tool if callable(tool) else None


def require_json(name: str, value: Any) -> None:
    try:
        json.dumps(value)
    except (TypeError, ValueError) as error:
        raise ToolPoolError(
            f"the return value of tool {name!r} is not JSON-serialisable: {error}"
        ) from None


def _docstring_summary(function: Callable[..., Any]) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


_SIMPLE_TYPES: Mapping[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def schema_from_signature(function: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for the keyword parameters of ``function``.

    Parameters without a default are required; ``X | None`` is optional;
    ``Literal[...]`` becomes an ``enum``; ``list[X]`` an array of X.
    """
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError) as error:
        raise ToolPoolError(
            f"cannot read the annotations of {function.__qualname__}: {error};"
            " pass parameters={...} explicitly"
        ) from None
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(parameter.name, Any)
        properties[parameter.name] = _type_schema(annotation, function, parameter.name)
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _type_schema(annotation: Any, function: Callable[..., Any], parameter: str) -> dict[str, Any]:
    if annotation is Any:
        return {}
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        others = [argument for argument in arguments if argument is not type(None)]
        if len(others) == 1:
            return _type_schema(others[0], function, parameter)
        return {"anyOf": [_type_schema(other, function, parameter) for other in others]}
    if origin is typing.Literal:
        return {"enum": list(arguments)}
    if origin in (list, tuple) or annotation in (list, tuple):
        schema: dict[str, Any] = {"type": "array"}
        if arguments and arguments[0] is not Ellipsis:
            schema["items"] = _type_schema(arguments[0], function, parameter)
        return schema
    if origin is dict:
        return {"type": "object"}
    if annotation in _SIMPLE_TYPES:
        return {"type": _SIMPLE_TYPES[annotation]}
    raise ToolPoolError(
        f"cannot derive a JSON Schema for parameter {parameter!r} of {function.__qualname__}"
        f" (annotation {annotation!r}); pass parameters={{...}} explicitly"
    )
