"""What each skill costs an agent in tokens (its name and description on every request, its
body when it loads, each doc when read), weighed against the budgets, and compared with the
skills as they were at a git ref."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from ..files import FileReadError
from ..gitref import AbsentAtRefError, export_folder, resolve_commit, work_tree
from ..skill import Skill
from ..tokens import estimate_tokens
from .token_model import (
    Budgets,
    Comparison,
    DocTokens,
    OverBudget,
    SkillTokens,
    TokenChange,
)

#: How the counts are made, as the report states it (bench/tokens.py measures the error).
ESTIMATOR = (
    "estimated (pytest_agent_skills.tokens.estimate_tokens), not one model's own count;"
    " bench/tokens.py measures its error against a real BPE tokenizer"
)


def listing_text(skill: Skill) -> str:
    """What a model is shown of a skill before it loads one: its name and description."""
    return f"{skill.name}: {skill.description}"


def skill_tokens(skill: Skill, shown_path: str) -> SkillTokens:
    """The tokens of ``skill``'s listing, body and each doc it can read."""
    docs = []
    for relative in skill.docs:
        try:
            text = skill.read_text(relative)
        except (FileReadError, OSError, UnicodeDecodeError):
            continue  # validate reports a doc that cannot be read
        docs.append(DocTokens(path=relative, tokens=estimate_tokens(text)))
    return SkillTokens(
        name=skill.name,
        path=shown_path,
        description=estimate_tokens(listing_text(skill)),
        body=estimate_tokens(skill.body),
        docs=docs,
    )


def weigh(skills: Sequence[SkillTokens], budgets: Budgets) -> list[OverBudget]:
    """Every part over its budget: bodies, docs, and the listing of all the skills."""
    severity: Literal["error", "warning"] = "error" if budgets.fail else "warning"
    over: list[OverBudget] = []
    for skill in skills:
        if skill.body > budgets.body:
            over.append(
                OverBudget(
                    rule="budget-body", skill=skill.name, part="body", tokens=skill.body,
                    budget=budgets.body, severity=severity,
                )
            )
        over.extend(
            OverBudget(
                rule="budget-doc", skill=skill.name, part=doc.path, tokens=doc.tokens,
                budget=budgets.doc, severity=severity,
            )
            for doc in skill.docs
            if doc.tokens > budgets.doc
        )
    listing = sum(skill.description for skill in skills)
    if listing > budgets.listing:
        over.append(
            OverBudget(
                rule="budget-listing", skill="", part="listing", tokens=listing,
                budget=budgets.listing, severity=severity,
            )
        )
    return over


def _load_cost(skill: SkillTokens) -> int:
    """The tokens a comparison weighs: the listing and the body."""
    return skill.description + skill.body


def compare(
    now: Sequence[SkillTokens], folders: Sequence[Path], ref: str, threshold: float
) -> Comparison:
    """Each skill's tokens (listing and body) at the git ``ref`` and now; ``folders`` are the
    skill folders of ``now``, in its order.  A skill new since the ref has no ``before``."""
    purpose = f"--compare {ref}"
    commit = ""
    changes = []
    with tempfile.TemporaryDirectory(prefix="agent-skills-compare-") as scratch:
        for index, (skill, folder) in enumerate(zip(now, folders, strict=True)):
            try:
                snapshot = export_folder(ref, folder, Path(scratch) / str(index), purpose)
            except AbsentAtRefError:
                before = None
            else:
                commit = snapshot.commit
                before = _load_cost(skill_tokens(Skill.load(snapshot.path), skill.path))
            changes.append(_change(skill.name, before, _load_cost(skill), threshold))
    if not commit and folders:  # no skill existed at the ref: name its commit all the same
        commit = resolve_commit(work_tree(folders[0], purpose), ref, purpose)
    return Comparison(ref=ref, commit=commit, threshold=threshold, changes=changes)


def _change(name: str, before: int | None, after: int, threshold: float) -> TokenChange:
    change = None if not before else round(after / before - 1, 4)
    return TokenChange(
        name=name,
        before=before,
        after=after,
        change=change,
        over_threshold=change is not None and change > threshold,
    )

