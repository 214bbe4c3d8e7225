"""A tiny HTML builder that escapes by default: text is text unless it is :class:`Markup`.

Everything the report shows from a model, a skill or a user (transcripts, file contents,
expectation texts, names) goes in as ``str`` and comes out escaped, so a transcript holding
``</script>`` or ``<img src=...>`` is shown, never parsed.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable
from importlib import resources
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


def html_page(title: str, body: Child, *, script: str = "") -> str:
    """A self-contained page in the report's style: its style sheet (and ``script``) inline,
    allowed by their hashes alone, nothing asked for beyond itself."""
    style = resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")
    scripts = f"script-src {_csp_hash(script)}; " if script else ""
    policy = (
        f"default-src 'none'; style-src {_csp_hash(style)}; {scripts}img-src 'none';"
        " base-uri 'none'; form-action 'none'"
    )
    head = el(
        "head",
        Markup('<meta charset="utf-8">'),
        el("meta", http_equiv="Content-Security-Policy", content=policy),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("title", title),
        Markup(f"<style>{style}</style>"),
    )
    scripted = Markup(f"<script>{script}</script>") if script else None
    return "<!DOCTYPE html>\n" + el("html", head, el("body", body, scripted), lang="en") + "\n"


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"
