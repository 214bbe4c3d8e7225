"""A tiny HTML builder that escapes by default: text is text unless it is :class:`Markup`.

Everything the report shows from a model, a skill or a user (transcripts, file contents,
expectation texts, names) goes in as ``str`` and comes out escaped, so a transcript holding
``</script>`` or ``<img src=...>`` is shown, never parsed.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TypeAlias

_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr"})


class Markup(str):
    """A string of HTML that is already safe to emit as is."""

    __slots__ = ()


Child: TypeAlias = "str | int | float | Markup | Iterable[Child] | None"
AttributeValue: TypeAlias = "str | int | float | bool | None"


def escape(text: str) -> str:
    return html.escape(text, quote=True)


def render(child: Child) -> Markup:
    if child is None:
        return Markup()
    if isinstance(child, Markup):
        return child
    if isinstance(child, str):
        return Markup(escape(child))
    if isinstance(child, (int, float)):
        return Markup(escape(str(child)))
    return Markup("".join(render(item) for item in child))


def el(tag: str, *children: Child, **attributes: AttributeValue) -> Markup:
    """``<tag attributes>children</tag>``; ``class_`` is ``class``, ``data_x`` is ``data-x``."""
    parts = [tag]
    for name, value in attributes.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        parts.append(name if value is True else f'{name}="{escape(str(value))}"')
    opening = f"<{' '.join(parts)}>"
    if tag in _VOID:
        return Markup(opening)
    return Markup(f"{opening}{render(children)}</{tag}>")


def column_heads(labels: Iterable[str]) -> Markup:
    """A table's heading row: one ``<th scope="col">`` per label."""
    return el("tr", [el("th", label, scope="col") for label in labels])
