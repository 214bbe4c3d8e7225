"""A bounded echo of text that came from outside (a model, a user): error messages quote
what they refuse, but never more than a short, marked excerpt of it."""

from __future__ import annotations

#: How many characters of the text an excerpt keeps.
EXCERPT_CHARACTERS = 200


def excerpt(value: object, limit: int = EXCERPT_CHARACTERS, *, quoted: bool = True) -> str:
    """``value`` quoted as ``repr`` quotes it (``quoted``; else as it is), cut to ``limit``
    characters and marked when longer: ``'abc…' (1,000,000 characters)``.  Not text: its
    ``repr``, cut the same way."""
    if not isinstance(value, str):
        value, quoted = repr(value), False
    if len(value) <= limit:
        return repr(value) if quoted else value
    if not quoted:
        return f"{value[:limit]}… ({len(value):,} characters)"
    shown = repr(value[:limit])
    return f"{shown[:-1]}…{shown[-1]} ({len(value):,} characters)"
