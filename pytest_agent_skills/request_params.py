"""Request parameters: fields a user adds to every chat-completions request of the agent
(``--model-param``) or of the grader (``--grader-param``), such as ``temperature``,
``seed``, ``max_tokens`` or ``tool_choice``.

They are written ``NAME=JSON`` (``temperature=0``, ``tool_choice="auto"``,
``stop=["END"]``): one per flag, one per line of an ini option, or in an environment
variable either as one JSON object (``{"temperature": 0, "seed": 7}``) or as ``NAME=JSON``
lines.  A name given twice in one place keeps its last value.  The fields the harness
writes itself (:data:`HARNESS_FIELDS`) are refused: a parameter that replaced the messages
or the tools would test another conversation than the one the results describe.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigurationError

#: Request fields the harness owns: the model name, the conversation, the skill tools.
HARNESS_FIELDS = ("model", "messages", "tools")


def parse_params(raw: str | Iterable[Any], origin: str, flag: str) -> dict[str, Any]:
    """The parameters of a flag's values, an ini option's lines or an environment variable's
    text, in the order given; a :class:`ConfigurationError` naming ``origin`` and ``flag``
    for a value that is not ``NAME=JSON`` or a name the harness owns."""
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("{"):
            return _checked(_object(text, origin, flag), origin, flag)
        raw = text.splitlines()
    params: dict[str, Any] = {}
    for item in raw:
        entry = str(item).strip()
        if not entry:
            continue
        name, sep, value = entry.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigurationError(
                f"{origin}: {flag} takes NAME=JSON (e.g. temperature=0, tool_choice=\"auto\"),"
                f" got {entry!r}"
            )
        try:
            params[name] = json.loads(value)
        except ValueError as error:
            raise ConfigurationError(
                f"{origin}: {flag} {name}: the value {value.strip()!r} is not JSON ({error});"
                f" write text in double quotes: {name}=\"{value.strip()}\""
            ) from None
    return _checked(params, origin, flag)


def checked_params(params: Mapping[str, Any], origin: str = "model_params") -> dict[str, Any]:
    """``params`` as a dict, refused (:class:`ConfigurationError`) when it names a field the
    harness owns: for parameters given in code rather than by a setting."""
    return _checked(dict(params), origin, "request parameter")


def _object(text: str, origin: str, flag: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ConfigurationError(
            f"{origin}: {flag}: not a JSON object ({error}); write"
            ' {"temperature": 0, "seed": 7} or NAME=JSON lines'
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{origin}: {flag}: not a JSON object: {text[:80]!r}")
    return data


def _checked(params: dict[str, Any], origin: str, flag: str) -> dict[str, Any]:
    owned = [name for name in params if name in HARNESS_FIELDS]
    if owned:
        raise ConfigurationError(
            f"{origin}: {flag} {owned[0]}: the harness writes {', '.join(HARNESS_FIELDS)} of"
            " every request itself; the model has its own setting (skills_model,"
            " skills_grader_model), the conversation and its tools are the harness's"
        )
    return params
