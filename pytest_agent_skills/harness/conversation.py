"""A conversation of several user messages: each one a :class:`UserTurn`.

A user turn is one user message, the model turns that answer it (tool calls,
then a final text), and what to expect of that part of the conversation.  Its
model turns come from its own ``script``, or from one source for the whole
conversation (a ``script`` whose final text turns end the user turns one by
one, a callable, or a cassette).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import HarnessError
from .turns import ScriptedTurn, scripted_turn

TURN_KEYS = ("expect", "script", "user")


@dataclass(frozen=True)
class UserTurn:
    """One user message of a conversation, with its own script and expectations."""

    user: str
    #: This turn's model turns (a final text turn last); None when the conversation has one
    #: source for every turn.
    script: tuple[ScriptedTurn, ...] | None = None
    #: What to expect of this user turn (the ``expect:`` block; ``requests[].turn`` counts from
    #: this turn's first request); None for no check.
    expect: Mapping[str, Any] | None = field(default=None, compare=False)


def user_turns(user: str | None, turns: Sequence[Any] | None) -> list[UserTurn]:
    """The user turns of ``run_conversation(user=...)`` or ``(turns=[...])``.

    A turn is a :class:`UserTurn`, a user message, or a mapping with ``user`` and optionally
    ``script`` and ``expect``.
    """
    if (user is None) == (turns is None):
        raise HarnessError(
            "give exactly one of user='...' (one user message) or turns=[...] (a conversation of"
            " several)"
        )
    if turns is None:
        return [UserTurn(str(user))]
    if isinstance(turns, (str, Mapping)) or not turns:
        raise HarnessError(
            "turns=[...] is a non-empty list of user turns: messages, or {'user': ...,"
            " 'script': [...], 'expect': {...}} mappings"
        )
    return [_user_turn(turn, index) for index, turn in enumerate(turns)]


def _user_turn(turn: Any, index: int) -> UserTurn:
    if isinstance(turn, UserTurn):
        return turn
    if isinstance(turn, str):
        return UserTurn(turn)
    if not isinstance(turn, Mapping):
        raise HarnessError(f"turns[{index}]: a user turn is a message or a mapping, got {turn!r}")
    for key in turn:
        if key not in TURN_KEYS:
            close = difflib.get_close_matches(str(key), TURN_KEYS, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise HarnessError(
                f"unknown key {key!r} in turns[{index}].{hint} Known keys: {', '.join(TURN_KEYS)}."
            )
    if not isinstance(turn.get("user"), str):
        raise HarnessError(f"turns[{index}]: 'user' (the user message, a string) is required")
    script = turn.get("script")
    return UserTurn(
        turn["user"],
        None if script is None else tuple(scripted_turn(entry) for entry in script),
        turn.get("expect"),
    )


def split_scripts(
    turns: Sequence[UserTurn],
    script: Sequence[Any] | Callable[..., Any] | None,
    cassette: Any,
) -> list[tuple[ScriptedTurn, ...]] | None:
    """The per-turn scripts, or None when ``script`` / ``cassette`` serves the whole
    conversation; every turn has its own script, or none has."""
    own = [turn.script is not None for turn in turns]
    if not any(own):
        if (script is None) == (cassette is None):
            raise HarnessError("give exactly one of script=... or cassette=...")
        return None
    if script is not None or cassette is not None:
        raise HarnessError(
            "the turns have their own scripts: do not give script=... or cassette=... for the"
            " whole conversation as well"
        )
    if not all(own):
        raise HarnessError(
            f"turns[{own.index(False)}] has no script, while other turns have one: give every"
            " turn its own script, or one script=... / cassette=... for the whole conversation"
        )
    return [turn.script or () for turn in turns]
