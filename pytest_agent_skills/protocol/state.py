"""Session state of the skill protocol: the documented ``temp:skill:*`` keys, and the load modes.

Tools never write the session state directly: each call returns a *state
delta* that the session merges after the call, exactly as the reference
framework merges ``actions.state_delta``.  Readers (the tools themselves,
prompt assembly, dynamic tool exposure) always look at the state merged
with the pending delta, as the reference's documented best practices ask.

Values follow the reference's documentation, not 1.2.0: ``loaded`` is the string ``"1"`` (1.2.0
stores ``True``); keys are not scoped by agent name (1.2.0's legacy form,
used when the agent has no name).  Selections are JSON arrays written as the
reference writes them (``json.dumps``: non-ASCII escaped, duplicates kept).

Load modes (1.2.0's ``SkillLoadModeNames``; ``turn`` is its default and ours):

- ``turn``: the loaded skills and their selections are cleared when the next
  user message starts a turn;
- ``once``: a loaded skill is shown in one request, then its keys are cleared;
  the tools it declares stay offered until the user turn ends (see
  :attr:`SessionState.shown_once`);
- ``session``: the keys persist for the whole conversation and lose their
  ``temp:`` prefix (``skill:loaded:<name>``), as 1.2.0 writes them.

In every mode ``temp:`` keys do not outlive a user turn: the reference's
session service never persists them from one invocation to the next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

LOAD_MODES = ("turn", "once", "session")
#: 1.2.0's default (``DEFAULT_SKILL_CONFIG["skill_processor"]["load_mode"]``).
DEFAULT_LOAD_MODE = "turn"
TEMP_PREFIX = "temp:"
LOADED_VALUE = "1"
ALL_SELECTED = "*"


def check_load_mode(load_mode: str) -> str:
    """``load_mode`` if it is one of :data:`LOAD_MODES`, else a ``ValueError`` listing them."""
    if load_mode not in LOAD_MODES:
        raise ValueError(f"unknown load mode {load_mode!r} (choose from {', '.join(LOAD_MODES)})")
    return load_mode


@dataclass(frozen=True)
class StateKeys:
    """The state key names of one load mode."""

    load_mode: str = DEFAULT_LOAD_MODE

    @property
    def prefix(self) -> str:
        """``temp:skill:`` (``skill:`` in session mode, which drops the ``temp:`` prefix)."""
        return "skill:" if self.load_mode == "session" else TEMP_PREFIX + "skill:"

    @property
    def loaded_prefix(self) -> str:
        return self.prefix + "loaded:"

    @property
    def docs_prefix(self) -> str:
        return self.prefix + "docs:"

    @property
    def tools_prefix(self) -> str:
        return self.prefix + "tools:"

    def loaded(self, skill: str) -> str:
        return self.loaded_prefix + skill

    def docs(self, skill: str) -> str:
        return self.docs_prefix + skill

    def tools(self, skill: str) -> str:
        return self.tools_prefix + skill

    def of_skill(self, skill: str) -> tuple[str, str, str]:
        return self.loaded(skill), self.docs(skill), self.tools(skill)

    def is_skill_key(self, key: str) -> bool:
        return key.startswith((self.loaded_prefix, self.docs_prefix, self.tools_prefix))


def loaded_key(skill: str, load_mode: str = DEFAULT_LOAD_MODE) -> str:
    return StateKeys(load_mode).loaded(skill)


def docs_key(skill: str, load_mode: str = DEFAULT_LOAD_MODE) -> str:
    return StateKeys(load_mode).docs(skill)


def tools_key(skill: str, load_mode: str = DEFAULT_LOAD_MODE) -> str:
    return StateKeys(load_mode).tools(skill)


@dataclass(frozen=True)
class Selection:
    """A docs or tools selection: everything (``"*"``) or an ordered list of names."""

    include_all: bool = False
    names: tuple[str, ...] = ()

    @classmethod
    def decode(cls, value: str | None) -> Selection | None:
        """The selection stored under a key; None when the key is absent."""
        if value is None:
            return None
        if value == ALL_SELECTED:
            return cls(include_all=True)
        decoded = json.loads(value)
        return cls(names=tuple(str(name) for name in decoded))

    def encode(self) -> str:
        """``"*"``, or the JSON array as the reference writes it (``json.dumps`` defaults)."""
        if self.include_all:
            return ALL_SELECTED
        return json.dumps(list(self.names))

    def expand(self, universe: tuple[str, ...] | list[str]) -> list[str]:
        """The names selected, with ``"*"`` expanded to ``universe``."""
        return list(universe) if self.include_all else list(self.names)


@dataclass
class SessionState:
    """Committed state plus the delta of the tool call in progress."""

    committed: dict[str, str] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    #: Keys written since :meth:`begin_turn` (what 1.2.0 calls the
    #: invocation's state delta; ``only_active_skills`` looks at it).
    turn_keys: set[str] = field(default_factory=set)
    #: Skills a once-mode request showed, then unloaded, since :meth:`begin_turn`.  1.2.0
    #: clears their keys in the invocation's delta, where a cleared tools key still marks the
    #: skill active and an absent selection means every declared tool: their tools stay
    #: offered and callable until the next user message (see :mod:`.dynamic`).
    shown_once: set[str] = field(default_factory=set)
    keys: StateKeys = field(default_factory=StateKeys)

    def get(self, key: str) -> str | None:
        if key in self.pending:
            return self.pending[key]
        return self.committed.get(key)

    def merged(self) -> dict[str, str]:
        return {**self.committed, **self.pending}

    def commit(self) -> dict[str, str]:
        """Merge the pending delta of a finished tool call into the committed state; the delta."""
        delta = dict(self.pending)
        self.committed.update(delta)
        self.turn_keys.update(delta)
        self.pending.clear()
        return delta

    def begin_turn(self) -> None:
        self.turn_keys.clear()
        self.shown_once.clear()

    def remove(self, keys: list[str]) -> dict[str, None]:
        """Delete committed ``keys`` that are present; the removal as a delta (key -> None)."""
        removed = {key: None for key in keys if key in self.committed}
        for key in removed:
            del self.committed[key]
        return removed

    def end_user_turn(self) -> dict[str, None]:
        """What a new user turn removes: every ``temp:`` key (the reference never persists
        them between invocations) and, in turn mode, every skill key."""
        turn_mode = self.keys.load_mode == "turn"
        return self.remove(
            [
                key
                for key in self.committed
                if key.startswith(TEMP_PREFIX) or (turn_mode and self.keys.is_skill_key(key))
            ]
        )

    def offload(self, skills: list[str]) -> dict[str, None]:
        """Once mode: the keys of ``skills``, just shown in a request, removed; the skills
        noted in :attr:`shown_once`."""
        self.shown_once.update(skills)
        return self.remove([key for skill in skills for key in self.keys.of_skill(skill)])

    def loaded_skills(self) -> list[str]:
        """Names of the loaded skills, sorted (the prompt order of the reference)."""
        prefix = self.keys.loaded_prefix
        return sorted(
            key[len(prefix) :]
            for key, value in self.merged().items()
            if key.startswith(prefix) and value == LOADED_VALUE
        )

    def is_loaded(self, skill: str) -> bool:
        return self.get(self.keys.loaded(skill)) == LOADED_VALUE

    def docs(self, skill: str) -> Selection | None:
        return Selection.decode(self.get(self.keys.docs(skill)))

    def tools(self, skill: str) -> Selection | None:
        return Selection.decode(self.get(self.keys.tools(skill)))

    def touched_this_turn(self, skill: str) -> bool:
        return self.keys.loaded(skill) in self.turn_keys or self.keys.tools(skill) in self.turn_keys
