"""Mutation testing of a skill: ``agent-skills mutate SKILL_DIR``.

Known regressions (a deleted step of SKILL.md, a doc the body no longer links, a script that
computes the wrong number, a description narrowed until the skill no longer fires) are made
in temporary copies of the skill (:mod:`.operators`), the skill's checks run against each copy
(:mod:`.checks`, :mod:`.runner`), and the report (:mod:`.report`) says which mutants the
checks noticed (killed) and which they let through (survived).  The user's files are only
ever read.
"""
