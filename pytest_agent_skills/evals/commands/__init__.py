"""``agent-skills eval``, ``triggers`` and ``improve-description``."""
