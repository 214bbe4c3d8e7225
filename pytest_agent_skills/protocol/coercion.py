"""Lax argument types: what the reference accepts beyond each tool's JSON Schema.

Real models send ``"timeout": "5"`` or ``"include_all_docs": "yes"``.  The
reference validates ``skill_run`` with pydantic, whose lax mode converts such
values (``"5"`` -> 5, ``"yes"`` -> True, ``5.0`` -> 5), and does not validate
the other skill tools at all.  A conversation recorded against it must replay
here, so before the schema check every scalar of the wrong JSON type is
converted exactly as pydantic's lax mode converts it (pydantic itself does
it); what pydantic refuses (``5.5`` for an integer, ``1`` for a string) is
left for the schema check to reject.

More relaxations apply only to the parameters a tool names in its
:class:`Leniency`, each the way 1.2.0 reads that parameter:

- ``lists`` (the ``docs`` / ``tools`` lists of ``skill_load`` and the select
  tools, which the reference reads with ``docs or []``): ``null`` means the
  parameter was left out, a lone string is a one-item list (the reference
  iterates the string and stores its characters; see docs/protocol.md), and an
  object is the list of its keys (what iterating it gives the reference);
- ``string_items`` (``skill_load``'s ``docs``): items that are not strings are
  left out, the others kept;
- ``folded`` (the select tools' ``mode``): an enum value in another letter case
  or padded (``"ADD"``) is the value it names, as the reference lowercases it;
- ``ignored`` (``skill_list``'s ``mode``): a parameter the reference takes and
  ignores, left out;
- ``floored`` (``skill_run``'s ``timeout``): a number below the schema's
  ``minimum`` is the minimum (``-1`` is ``0``, the default timeout, as the
  reference's ``max(0, timeout)``).

Every conversion is returned as a :class:`Coercion`, so that the trajectory
shows what the model really sent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from ..docpath import dotted


class _LeftOut:
    def __repr__(self) -> str:
        return "(left out)"


#: The value of :attr:`Coercion.value` when a ``null`` argument was left out.
LEFT_OUT: Final = _LeftOut()

_PYTHON_TYPES = {"integer": int, "number": float, "boolean": bool}


@dataclass(frozen=True)
class Coercion:
    """One argument value converted before the tool saw it."""

    path: tuple[str | int, ...]
    original: Any
    value: Any

    def describe(self) -> str:
        """``timeout: "5" -> 5``, as the trajectory prints it."""
        shown = "(left out)" if self.value is LEFT_OUT else _json(self.value)
        return f"{dotted(self.path)}: {_json(self.original)} -> {shown}"


@dataclass(frozen=True)
class Leniency:
    """The parameters of one tool that take more than their schema says (see the module)."""

    lists: tuple[str, ...] = ()
    string_items: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    floored: tuple[str, ...] = ()


#: A tool whose parameters take what their schema says, no more.
NO_LENIENCY = Leniency()


def coerce_arguments(
    schema: Mapping[str, Any],
    arguments: dict[str, Any],
    *,
    lax_lists: Collection[str] = (),
    leniency: Leniency = NO_LENIENCY,
) -> tuple[dict[str, Any], tuple[Coercion, ...]]:
    """``arguments`` with lax values converted for ``schema`` (an object schema), and the
    conversions made.  The input is not modified; without conversions it is returned as is.
    ``lax_lists`` adds to ``leniency.lists``."""
    coercions: list[Coercion] = []
    properties = schema.get("properties") or {}
    lists = {*lax_lists, *leniency.lists}
    result = dict(arguments)
    for name, value in arguments.items():
        path = (name,)
        if name in leniency.ignored and name not in properties:
            coercions.append(Coercion(path, value, LEFT_OUT))
            del result[name]
            continue
        subschema = properties.get(name)
        if name in lists and _is_string_array(subschema):
            if value is None:
                coercions.append(Coercion(path, None, LEFT_OUT))
                del result[name]
                continue
            if isinstance(value, (str, dict)):
                coerced: Any = list(value) if isinstance(value, dict) else [value] if value else []
                coercions.append(Coercion(path, value, coerced))
                value = result[name] = coerced
        if name in leniency.string_items and isinstance(value, list):
            kept = [item for item in value if isinstance(item, str)]
            if len(kept) < len(value):
                coercions.extend(
                    Coercion((name, index), item, LEFT_OUT)
                    for index, item in enumerate(value)
                    if not isinstance(item, str)
                )
                value = result[name] = kept
        if name in leniency.folded and subschema is not None:
            value = result[name] = _folded(subschema, value, path, coercions)
        subschema = subschema if subschema is not None else _property_schema(schema, name)
        if subschema is None:
            continue
        coerced = _coerce(subschema, value, path, coercions)
        if name in leniency.floored:
            coerced = _floored(subschema, coerced, value, path, coercions)
        result[name] = coerced
    if not coercions:
        return arguments, ()
    return result, tuple(coercions)


def _folded(
    schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], out: list[Coercion]
) -> Any:
    """``value`` as the enum member it names in another letter case or padded, else as is."""
    members = schema.get("enum") or ()
    if not isinstance(value, str) or value in members:
        return value
    for member in members:
        if isinstance(member, str) and value.strip().lower() == member.lower():
            out.append(Coercion(path, value, member))
            return member
    return value


def _floored(
    schema: Mapping[str, Any], value: Any, sent: Any, path: tuple[Any, ...], out: list[Coercion]
) -> Any:
    """``value`` (converted from ``sent``), raised to the schema's minimum if below it."""
    minimum = schema.get("minimum")
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if minimum is None or not number or value >= minimum:
        return value
    if out and out[-1].path == path:  # converted first ("-1" -> -1): one conversion, sent -> 0
        out.pop()
    out.append(Coercion(path, sent, minimum))
    return minimum


def _property_schema(schema: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties") or {}
    if name in properties:
        return properties[name]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _is_string_array(schema: Mapping[str, Any] | None) -> bool:
    return (
        schema is not None
        and schema.get("type") == "array"
        and (schema.get("items") or {}).get("type") == "string"
    )


def _coerce(
    schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], out: list[Coercion]
) -> Any:
    """``value`` converted for ``schema``; the same object when nothing changed."""
    declared = schema.get("type")
    types = declared if isinstance(declared, list) else [declared] if declared else []
    if not types or any(_matches(kind, value) for kind in types):
        return _coerce_inside(schema, value, path, out)
    for kind in types:
        python_type = _PYTHON_TYPES.get(kind)
        if python_type is None:
            continue
        converted = _lax(python_type, value)
        if converted is not None:
            out.append(Coercion(path, value, converted))
            return converted
    return value


def _coerce_inside(
    schema: Mapping[str, Any], value: Any, path: tuple[Any, ...], out: list[Coercion]
) -> Any:
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        items = [_coerce(schema["items"], item, (*path, i), out) for i, item in enumerate(value)]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    if isinstance(value, dict):
        converted = {}
        changed = False
        for key, item in value.items():
            subschema = _property_schema(schema, key)
            new = _coerce(subschema, item, (*path, key), out) if subschema is not None else item
            changed = changed or new is not item
            converted[key] = new
        return converted if changed else value
    return value


def _matches(kind: str, value: Any) -> bool:
    """The JSON Schema type check (as jsonschema does it: 5.0 is an integer)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    return True


def _lax(python_type: type, value: Any) -> Any:
    """``value`` as pydantic's lax mode converts it to ``python_type``, or None if it refuses."""
    from pydantic import ValidationError

    if value is None or isinstance(value, (list, dict)):
        return None
    try:
        converted = _adapter(python_type).validate_python(value)
    except ValidationError:
        return None
    if isinstance(converted, float) and not math.isfinite(converted):
        return None  # "nan" / "inf" are numbers to pydantic, not to JSON
    return converted


@cache
def _adapter(python_type: type) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(python_type)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
