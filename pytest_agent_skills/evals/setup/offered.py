"""The skills a model-facing command offers, checked before its first request: a skill whose
front matter ``validate`` finds invalid (YAML that does not parse, no name, no description)
would be offered to the model as something else (its folder's name, an empty description) and
its scores would say nothing of the skill.  Such a skill stops the command, naming the file, the
line and the rule; ``skills_eval_allow_invalid`` (``--allow-invalid-skills``) goes on, saying
what the model will see of each."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from ...errors import AgentSkillsError

if TYPE_CHECKING:
    from ...skill import Skill

#: The validate checks of what a model is shown of a skill before it loads one.
OFFERED_CHECKS = ("frontmatter", "name", "description")


class InvalidOfferedSkillError(AgentSkillsError):
    """An offered skill's front matter is invalid; no request was made."""


def check_offered(
    skills: Iterable[Skill], allow_invalid: bool, stream: TextIO | None = None
) -> None:
    """Refuse the offered ``skills`` when one is invalid (an :class:`InvalidOfferedSkillError`
    listing every finding), or with ``allow_invalid`` write to ``stream`` (stderr) what the
    model will see of each such skill."""
    from ...rules import validate_check

    invalid = {}
    for skill in skills:
        # The errors validate finds in what the model is shown of the skill.
        checked = (finding for check in OFFERED_CHECKS for finding in validate_check(skill, check))
        findings = [finding for finding in checked if finding.is_error]
        if findings:
            invalid[skill.skill_file] = (skill, findings)
    if not invalid:
        return
    lines = [finding.format() for _skill, findings in invalid.values() for finding in findings]
    if not allow_invalid:
        raise InvalidOfferedSkillError(
            f"{len(invalid)} offered skill(s) with invalid front matter, no request made:\n  "
            + "\n  ".join(lines)
            + "\nfix them ('agent-skills validate' shows every finding), or go on with"
            " --allow-invalid-skills (skills_eval_allow_invalid) to offer them as they read"
        )
    out = stream or sys.stderr
    for skill, _findings in invalid.values():
        out.write(
            f"warning: {skill.skill_file} has invalid front matter; offered anyway"
            f" (--allow-invalid-skills): the model sees the name {skill.name!r} and the"
            f" description {skill.description!r}\n"
        )
