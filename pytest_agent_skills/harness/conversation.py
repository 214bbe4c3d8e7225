"""What one conversation runs: a :class:`Conversation`, one frozen value, of
:class:`UserTurn` s.

A user turn is one user message, the model turns that answer it (tool calls,
then a final text), and what to expect of that part of the conversation.  Its
model turns come from its own ``script``, or from one source for the whole
conversation (a ``script`` whose final text turns end the user turns one by
one, a callable, or a cassette).

A :class:`Conversation` is built once (from a scenario file, from the ``skill_agent``
fixture's arguments, or by hand) and passed whole to
:func:`~pytest_agent_skills.harness.run_conversation`, beside the session-wide
:class:`~pytest_agent_skills.harness.RunSettings`.  A variant is
``dataclasses.replace(conversation, ...)``: it is checked again as it is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ..docpath import DocPath, unknown_key
from .errors import HarnessError
from .turns import DEFAULT_MAX_TURNS, ScriptedTurn, ScriptFunction, scripted_turn

if TYPE_CHECKING:
    from ..repository import SkillRepository

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


@dataclass(frozen=True)
class Conversation:
    """One conversation to run, and what to expect of it.

    ``user`` is a single user message; ``turns`` a conversation of several, each a
    :class:`UserTurn`, a message, or a mapping ``{user, script, expect}``.  The model turns
    come from one ``script`` (turns, or a callable ``(request, index) -> turn``) or
    ``cassette`` for the whole conversation, or from each turn's own ``script``.
    ``transport``, ``model_name`` and ``load_mode`` override the
    :class:`~pytest_agent_skills.harness.RunSettings` for this conversation (None: the
    settings'); ``match_ignore`` adds to theirs.  ``expect`` (the scenario ``expect:``
    block) and the turns' own ``expect`` are checked at the end; ``where`` (a document
    path -> ``"line 12"``) and ``title`` shape the lines of the failure.

    To run the same conversation against another repository (a skill eval's with-skill and
    without-skill runs, N times each)::

        variant = dataclasses.replace(conversation, repository=SkillRepository(other_roots))
        outcomes = [run_conversation(variant, settings) for _ in range(runs)]

    Each run builds its own session, workspace and model from the two values, so runs may go
    at once from threads.  Recordings that should share one kept-alive HTTP client to the
    upstream give their cassettes a :class:`~.cassette.CassetteBackend` whose
    ``_upstream_client`` hands that client out.
    """

    repository: SkillRepository
    user: str | None = None
    turns: Sequence[UserTurn | Mapping[str, Any] | str] | None = None
    script: Sequence[Any] | ScriptFunction | None = None
    cassette: Path | str | None = None
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    dynamic_tools: bool = False
    exec_tools: bool = False
    inputs: Mapping[str, str | bytes] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    load_mode: str | None = None
    transport: str | None = None
    model_name: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    allow_unused: bool = False
    match_ignore: Sequence[str] = ()
    expect: Mapping[str, Any] | None = None
    where: Callable[[DocPath], str] | None = field(default=None, compare=False)
    title: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # Normalised once, checked as made: a bad conversation fails where it is built.
        turns = tuple(normalized_turns(self.user, self.turns))
        if self.turns is not None:
            object.__setattr__(self, "turns", turns)
        if self.script is not None and not callable(self.script):
            object.__setattr__(self, "script", tuple(self.script))
        if self.cassette is not None:
            object.__setattr__(self, "cassette", Path(self.cassette))
        object.__setattr__(self, "match_ignore", tuple(self.match_ignore))
        split_scripts(turns, self.script, self.cassette)

    @property
    def user_turns(self) -> tuple[UserTurn, ...]:
        """The user turns, one for ``user=...``."""
        return tuple(normalized_turns(self.user, self.turns))

    @property
    def turn_scripts(self) -> list[tuple[ScriptedTurn, ...]] | None:
        """The script of each user turn, or None when ``script`` / ``cassette`` serves the
        whole conversation."""
        return split_scripts(self.user_turns, self.script, self.cassette)


class ConversationFields(TypedDict, total=False):
    """The keyword arguments of a :class:`Conversation` after its repository and user
    message: what ``run_conversation(repository, user, **fields)`` and
    ``skill_agent.run(user, **fields)`` accept."""

    turns: Sequence[UserTurn | Mapping[str, Any] | str] | None
    script: Sequence[Any] | ScriptFunction | None
    cassette: Path | str | None
    tools: Mapping[str, Mapping[str, Any]]
    dynamic_tools: bool
    exec_tools: bool
    inputs: Mapping[str, str | bytes]
    env: Mapping[str, str]
    load_mode: str | None
    transport: str | None
    model_name: str | None
    max_turns: int
    allow_unused: bool
    match_ignore: Sequence[str]
    expect: Mapping[str, Any] | None
    where: Callable[[DocPath], str] | None
    title: str


def normalized_turns(user: str | None, turns: Sequence[Any] | None) -> list[UserTurn]:
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
            raise HarnessError(unknown_key(key, TURN_KEYS, f"turns[{index}]"))
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
    script: Sequence[Any] | ScriptFunction | None,
    cassette: Path | str | None,
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
