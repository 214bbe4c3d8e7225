"""``agent-skills audit``: find malicious and dangerous skills before an agent loads them.

The static half reads a skill's files with rules (:mod:`.rules`); the dynamic half
(``--dynamic``) runs its scripts and shell blocks in the isolated runtime, baited with fake
credentials, behind :mod:`.seam`.  Both write one document, :class:`.model.AuditDocument`
(``schemas/audit.schema.json``).  See ``docs/audit.md``.
"""
