"""Session state of the skill protocol: the seed's ``temp:skill:*`` keys.

Tools never write the session state directly: each call returns a *state
delta* that the session merges after the call, exactly as the reference
framework merges ``actions.state_delta``.  Readers (the tools themselves,
prompt assembly, dynamic tool exposure) always look at the state merged
with the pending delta, as the seed's best practices ask.

Values follow the seed, not 1.2.0: ``loaded`` is the string ``"1"`` (1.2.0
stores ``True``); keys are not scoped by agent name (1.2.0's legacy form,
used when the agent has no name).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

LOADED_PREFIX = "temp:skill:loaded:"
DOCS_PREFIX = "temp:skill:docs:"
TOOLS_PREFIX = "temp:skill:tools:"
LOADED_VALUE = "1"
ALL_SELECTED = "*"


def loaded_key(skill: str) -> str:
    return LOADED_PREFIX + skill


def docs_key(skill: str) -> str:
    return DOCS_PREFIX + skill


def tools_key(skill: str) -> str:
    return TOOLS_PREFIX + skill


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
        if self.include_all:
            return ALL_SELECTED
        return json.dumps(list(self.names), ensure_ascii=False)

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

    def loaded_skills(self) -> list[str]:
        """Names of the loaded skills, sorted (the prompt order of the reference)."""
        merged = self.merged()
        return sorted(
            key[len(LOADED_PREFIX) :]
            for key, value in merged.items()
            if key.startswith(LOADED_PREFIX) and value == LOADED_VALUE
        )

    def is_loaded(self, skill: str) -> bool:
        return self.get(loaded_key(skill)) == LOADED_VALUE

    def docs(self, skill: str) -> Selection | None:
        return Selection.decode(self.get(docs_key(skill)))

    def tools(self, skill: str) -> Selection | None:
        return Selection.decode(self.get(tools_key(skill)))

    def touched_this_turn(self, skill: str) -> bool:
        return loaded_key(skill) in self.turn_keys or tools_key(skill) in self.turn_keys
