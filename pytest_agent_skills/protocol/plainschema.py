"""A quick check that tool-call arguments plainly satisfy a tool's JSON Schema.

``jsonschema`` validates the arguments of every tool call, at ~50 us a call on the
protocol's path; most calls are valid and their schemas use a handful of keywords.
:func:`plainly_valid` answers True only when it is certain: it knows ``type``,
``properties``, ``required``, ``additionalProperties``, ``items``, ``enum`` (of strings),
``minLength``, ``minimum`` and the annotations, compares Python types exactly (``1.0`` for
an integer, a ``dict`` subclass, a ``bool`` for a number: not certain), and says False for
anything else.  False means "let ``jsonschema`` decide": it does, and words the errors.
"""

from __future__ import annotations

from typing import Any

#: Keywords that never make a value invalid.
_ANNOTATIONS = frozenset({"description", "default", "title", "examples", "$comment"})
#: The JSON types, each by the exact Python types of a decoded JSON value.
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def plainly_valid(schema: Any, value: Any) -> bool:
    """True when ``value`` certainly satisfies ``schema``; False when it does not, or when
    this check cannot tell."""
    if type(schema) is not dict:
        return False
    for keyword, rule in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword == "additionalProperties":
            if not _additional_properties(rule, value, schema.get("properties", {})):
                return False
            continue
        check = _KEYWORDS.get(keyword)
        if check is None or not check(rule, value):
            return False
    return True


def _type(rule: Any, value: Any) -> bool:
    names = [rule] if type(rule) is str else rule
    if type(names) is not list or not all(type(name) is str and name in _TYPES for name in names):
        return False  # jsonschema refuses an unknown type name
    return any(type(value) in _TYPES[name] for name in names)


def _properties(rule: Any, value: Any) -> bool:
    if type(rule) is not dict:
        return False
    if type(value) is not dict:
        return True  # applies to objects only
    return all(name not in value or plainly_valid(rule[name], value[name]) for name in rule)


def _required(rule: Any, value: Any) -> bool:
    if type(rule) is not list:
        return False
    return type(value) is not dict or all(name in value for name in rule)


def _additional_properties(rule: Any, value: Any, properties: Any) -> bool:
    """The names of ``value`` that ``properties`` does not list satisfy ``rule``."""
    if rule is not False and rule is not True and type(rule) is not dict:
        return False
    if type(value) is not dict or rule is True:
        return True
    if type(properties) is not dict:
        return False
    extra = [name for name in value if name not in properties]
    return not extra if rule is False else all(plainly_valid(rule, value[n]) for n in extra)


def _items(rule: Any, value: Any) -> bool:
    if type(rule) is not dict:
        return False
    return type(value) is not list or all(plainly_valid(rule, item) for item in value)


def _enum(rule: Any, value: Any) -> bool:
    # A string equals only a string; any other value: let jsonschema compare (1 == True ...).
    return type(rule) is list and type(value) is str and value in rule


def _min_length(rule: Any, value: Any) -> bool:
    if type(rule) is not int:
        return False
    return type(value) is not str or len(value) >= rule


def _minimum(rule: Any, value: Any) -> bool:
    if type(rule) not in (int, float):
        return False
    if type(value) in (int, float):
        return bool(value >= rule)
    return type(value) in (str, bool, dict, list, type(None))  # not a number: does not apply


_KEYWORDS = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "items": _items,
    "enum": _enum,
    "minLength": _min_length,
    "minimum": _minimum,
}
