"""``validate(skill, options)``: every rule over one skill; reports over many."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from ..filenames import SKILL_FILE
from ..findings import Finding, Severity
from ..links import SkippedLink
from ..listings import FolderListings
from ..repository import skill_folders
from ..skill import ParsedSkillFile, Skill, SkillNotFoundError
from ._base import Hit, RuleFunction
from ._body import check_body
from ._catalogue import CHECKS, RULES
from ._fields import check_description, check_fields, check_name
from ._ignores import Suppressed, check_directives, suppress
from ._options import ValidationOptions
from ._references import check_references
from ._split import Split, processes_for
from ._tools import check_tools


def _check_body(skill: Skill, options: ValidationOptions) -> Iterator[Hit]:
    yield from check_body(skill, options)
    yield from check_directives(skill)


RULE_FUNCTIONS: dict[str, RuleFunction] = {
    "fields": check_fields,
    "name": check_name,
    "description": check_description,
    "body": _check_body,
    "tools": check_tools,
    "references": check_references,
}
DEFAULT_OPTIONS = ValidationOptions()
CHECK_RULES = {check: [rule for rule in RULES.values() if rule.check == check] for check in CHECKS}
#: The runtimes each check's rules are about ("" for every runtime): a profile runs a check
#: when it runs one of its rules (see ``Profile.runs``).
_CHECK_RUNTIMES = {check: {rule.runtime for rule in rules} for check, rules in CHECK_RULES.items()}


def _finding(skill: Skill, hit: Hit, severity: Severity) -> Finding:
    return Finding(hit.rule, severity, hit.message, skill.skill_file, hit.line)


def _apply(findings: Iterable[Finding], options: ValidationOptions) -> list[Finding]:
    kept: list[Finding] = []
    severities: dict[str, Severity | None] = {}  # a rule often fires many times in one skill
    for finding in findings:
        if finding.rule not in severities:
            severities[finding.rule] = options.severity_of(finding.rule)
        severity = severities[finding.rule]
        if severity is not None:
            kept.append(
                finding if severity is finding.severity else finding._replace(severity=severity)
            )
    return kept


def check_findings(
    skill: Skill, check: str, options: ValidationOptions = DEFAULT_OPTIONS
) -> tuple[list[Finding], list[Suppressed]]:
    """The findings of one check (see ``CHECKS``) for one skill, and those an exemption
    (per-path ignore, ignore comment) suppressed."""
    if check == "frontmatter":
        raw: list[Finding] = list(skill.problems)
    elif not ("" in _CHECK_RUNTIMES[check] or options.profile.runtime in _CHECK_RUNTIMES[check]):
        return [], []  # e.g. the tools check outside the trpc profile: nothing to read
    else:
        raw = [
            _finding(skill, hit, RULES[hit.rule].severity)
            for hit in RULE_FUNCTIONS[check](skill, options)
        ]
    if not raw:  # the common case: nothing to weigh or suppress
        return raw, []
    return suppress(skill, _apply(raw, options), options.per_path_ignores)


def validate_check(
    skill: Skill, check: str, options: ValidationOptions = DEFAULT_OPTIONS
) -> list[Finding]:
    """The findings of one check (see ``CHECKS``) for one skill (suppressed ones left out)."""
    return check_findings(skill, check, options)[0]


def validate(skill: Skill, options: ValidationOptions = DEFAULT_OPTIONS) -> list[Finding]:
    """Every finding for ``skill``: parse problems first, then each check in order."""
    return list(report_skill(skill, options).findings)


_NO_FINDINGS: tuple[list[Finding], list[Suppressed]] = ([], [])


def report_skill(
    skill: Skill,
    options: ValidationOptions = DEFAULT_OPTIONS,
    name_duplicates: tuple[list[Finding], list[Suppressed]] = _NO_FINDINGS,
) -> SkillReport:
    """The :class:`SkillReport` of ``skill``: each check's findings in order, the
    ``name_duplicates`` found among many skills (kept, suppressed: see
    :func:`duplicate_name_findings_by_file`) after the name check's."""
    return _reports([skill], [options], [name_duplicates])[0]


#: What one check found in one skill: the findings kept, those an exemption suppressed.
_Outcome = tuple[list[Finding], list[Suppressed]]


def _reports(
    skills: Sequence[Skill],
    options: Sequence[ValidationOptions],
    name_duplicates: Sequence[_Outcome],
) -> list[SkillReport]:
    """The :func:`report_skill` of each skill (with its options and name duplicates)."""
    return [
        _report(skill, outcomes, duplicates)
        for skill, outcomes, duplicates in zip(
            skills, _check_outcomes(skills, options), name_duplicates, strict=True
        )
    ]


def _check_outcomes(
    skills: Sequence[Skill], options: Sequence[ValidationOptions]
) -> list[list[_Outcome]]:
    """The outcome of each check (in :data:`CHECKS` order) for each skill, each check run over
    every skill before the next, so that one check's code and tables stay in the processor's
    caches while it runs over thousands of skills."""
    outcomes: list[list[_Outcome]] = [[] for _skill in skills]
    for check in CHECKS:
        for index, skill in enumerate(skills):
            outcomes[index].append(check_findings(skill, check, options[index]))
    return outcomes


def _report(skill: Skill, outcomes: Sequence[_Outcome], name_duplicates: _Outcome) -> SkillReport:
    """The :class:`SkillReport` of ``skill`` from its checks' outcomes, the ``name_duplicates``
    found among many skills after the name check's."""
    findings: list[Finding] = []
    suppressed: list[Suppressed] = []
    for check, (kept, silenced) in zip(CHECKS, outcomes, strict=True):
        findings += kept
        suppressed += silenced
        if check == "name":
            findings += name_duplicates[0]
            suppressed += name_duplicates[1]
    return SkillReport(skill, tuple(findings), tuple(suppressed))


def duplicate_name_findings(
    skills: Sequence[Skill], options: ValidationOptions = DEFAULT_OPTIONS
) -> list[Finding]:
    """A ``name-duplicate`` finding on every skill whose name an earlier skill already has.

    The first skill in ``skills`` order wins, as in :class:`SkillRepository`.  Only a skill
    whose front matter declares a name takes part: a SKILL.md without one (a fragment, a
    template, a file that does not parse) fails its own checks, and neither wins a name nor
    loses one.  Exemptions are not applied here (see :func:`duplicate_name_findings_by_file`).
    """
    first: dict[str, Skill] = {}
    hits = [hit for skill in skills if (hit := _duplicate_name(skill, first)) is not None]
    return _apply(hits, options)


def _duplicate_name(skill: Skill, first: dict[str, Skill]) -> Finding | None:
    """The ``name-duplicate`` finding of ``skill`` when a skill met before it (``first``: the
    first skill of each name, which ``skill`` joins when it is first) declares its name."""
    if not _declares_name(skill):
        return None
    winner = first.setdefault(skill.name, skill)
    if winner is skill:
        return None
    line = skill.front_matter.line_of("name") if skill.front_matter else None
    message = (
        f"skill {skill.name!r} is also defined in {winner.skill_file}, which wins (the first"
        " one found is used, roots in the order given); this one is ignored. Rename one."
    )
    severity = RULES["name-duplicate"].severity
    return Finding("name-duplicate", severity, message, skill.skill_file, line)


def _declares_name(skill: Skill) -> bool:
    """Whether the front matter gives the skill a name (not the folder-name fallback)."""
    front_matter = skill.front_matter
    if front_matter is None:
        return False
    name = front_matter.values.get("name")
    return name is not None and bool(str(name).strip())


def duplicate_name_findings_by_file(
    skills: Sequence[Skill], options: ValidationOptions = DEFAULT_OPTIONS
) -> dict[Path, tuple[list[Finding], list[Suppressed]]]:
    """:func:`duplicate_name_findings` by the SKILL.md they are about: (kept, suppressed)."""
    by_file: dict[Path, list[Finding]] = {}
    for finding in duplicate_name_findings(skills, options):
        by_file.setdefault(finding.path, []).append(finding)
    if not by_file:
        return {}  # the common case: no need to index thousands of skills by their file
    skill_of = {skill.skill_file: skill for skill in skills}
    return {
        path: suppress(skill_of[path], findings, options.per_path_ignores)
        for path, findings in by_file.items()
    }


class SkillReport(NamedTuple):
    """One skill's validation result."""

    skill: Skill
    findings: tuple[Finding, ...]
    suppressed: tuple[Suppressed, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(finding.is_error for finding in self.findings)


def skill_dirs(path: Path, listings: FolderListings | None = None) -> list[Path]:
    """Skill folders for a path that is a SKILL.md, a skill folder or a root of many skills
    (folders listed through ``listings``, new ones when None)."""
    return [directory for directory, _identity in _skill_folders(path, listings)]


def _skill_folders(
    path: Path, listings: FolderListings | None, skipped: list[SkippedLink] | None = None
) -> Iterable[tuple[Path, tuple[int, int]]]:
    """:func:`skill_dirs` with each folder's (device, inode); linked folders the walk did not
    enter go to ``skipped``."""
    listings = listings or FolderListings()
    if path.name == SKILL_FILE:
        parent = path.parent
        folder = os.path.abspath(parent)
        if _is_skill_file(path, folder, listings):
            status = os.stat(folder)  # one system call; resolve() makes one per path part
            return [(parent, (status.st_dev, status.st_ino))]
    return skill_folders(path, listings, skipped)


def _is_skill_file(path: Path, folder: str, listings: FolderListings) -> bool:
    """Whether the ``SKILL.md`` at ``path`` (in the absolute ``folder``) is a file (links
    followed): from the folder's listing, which the configuration and the checks read too
    (thousands of paths are common), else from the file system (e.g. a case-insensitive one,
    where the listing spells it otherwise)."""
    known = listings.is_file(folder, SKILL_FILE)
    return path.is_file() if known is None else known


def validate_paths(
    paths: Iterable[Path],
    options: ValidationOptions | Callable[[Path], ValidationOptions] = DEFAULT_OPTIONS,
    skipped: list[SkippedLink] | None = None,
    listings: FolderListings | None = None,
    jobs: int = 1,
) -> list[SkillReport]:
    """Validate every skill under ``paths`` (in the order given), duplicates included.

    ``options`` are the options of every skill, or a function giving those of the skills
    found under each path (e.g. each path's own configuration file); the first path a skill
    is found under decides.  Each skill folder is validated once, however many links lead
    to it; the linked folders the walk did not enter (a link back into a folder it is in, a
    second way to a folder walked already) are added to ``skipped`` when given.  Folders are
    listed through ``listings`` (a run's shared listings, e.g. those the configuration was
    located with; new ones when None).  With ``jobs`` above 1, the skills are shared out to up
    to that many processes, 70 skills each at least (see :mod:`._split`); the reports are the
    same.
    """
    # Each folder listed once in this run: by the walk, for the rules.
    listings = listings or FolderListings()
    directories: dict[tuple[int, int], tuple[Path, ValidationOptions]] = {}
    for path in paths:  # a skill under two of the paths (a root and its parent) counts once
        chosen = options(path) if callable(options) else options
        for directory, identity in _skill_folders(path, listings, skipped):
            directories.setdefault(identity, (directory, chosen))
    folders = [directory for directory, _chosen in directories.values()]
    chosen_options = [chosen for _directory, chosen in directories.values()]
    processes = processes_for(len(folders), jobs)
    if processes > 1:
        return _reports_shared_out(folders, chosen_options, listings, processes)
    skills = Skill.load_all(folders, listings)
    return _reports(skills, chosen_options, _name_duplicates(skills, chosen_options))


def _reports_shared_out(
    folders: Sequence[Path],
    chosen_options: Sequence[ValidationOptions],
    listings: FolderListings,
    processes: int,
) -> list[SkillReport]:
    """The reports of the skills in ``folders``, shared out to ``processes`` processes (this
    one and forked children), each reading and checking its own share: the same reports as in
    one process."""

    def read_and_check(share: Sequence[int]) -> list[tuple[_Parsed, list[_Outcome]] | _Gone]:
        # In a child: its skills read and checked there, sent back with their outcomes.
        try:
            shared = Skill.load_all([folders[index] for index in share], listings)
        except SkillNotFoundError as error:  # a SKILL.md gone since the walk: raised below
            return [_Gone(error.path, error.line, error.message)] * len(share)
        outcomes = _check_outcomes(shared, [chosen_options[index] for index in share])
        return [
            ((skill.parsed, skill.extra_problems), checks)
            for skill, checks in zip(shared, outcomes, strict=True)
        ]

    # A child pickles what it sends back, and its first writes copy the pages it shares with
    # this process: it takes a smaller share, for both to end together.
    split = Split(len(folders), read_and_check, processes, own_weight=_OWN_WEIGHT)
    try:
        own = Skill.load_all([folders[index] for index in split.own], listings)
        own_outcomes = _check_outcomes(own, [chosen_options[index] for index in split.own])
    except BaseException:
        split.abandon()
        raise
    placed: list[Skill | None] = [None] * len(folders)
    outcomes: list[Sequence[_Outcome]] = [()] * len(folders)
    for index, skill, checks in zip(split.own, own, own_outcomes, strict=True):
        placed[index] = skill
        outcomes[index] = checks
    for share, results in split.gather():
        for index, result in zip(share, results, strict=True):
            if isinstance(result, _Gone):  # the error one process raises, not a failed worker
                raise SkillNotFoundError(*result)
            (parsed, extra_problems), checks = result
            placed[index] = Skill(folders[index], parsed, extra_problems, listings)
            outcomes[index] = checks
    skills = [skill for skill in placed if skill is not None]  # every one: the shares cover all
    # Names clash across the shares: weighed here, over every skill.
    duplicates = _name_duplicates(skills, chosen_options)
    return [
        _report(skill, checks, name_clashes)
        for skill, checks, name_clashes in zip(skills, outcomes, duplicates, strict=True)
    ]


#: This process's share against a child's (see :class:`Split`).
_OWN_WEIGHT = 1.2

#: What a child sends back of a skill it read: its parse and the problems met reading it.  The
#: folder is the parent's, and so are the folder listings; what the skill caches (its reference
#: reading, its Markdown) is made again where needed, which costs less than its unpickling.
_Parsed = tuple[ParsedSkillFile, tuple[Finding, ...]]


class _Gone(NamedTuple):
    """A :class:`SkillNotFoundError` met in a child, sent back as its parts (the error itself
    does not unpickle: its one argument is the whole message)."""

    path: Path
    line: int | None
    message: str


def _name_duplicates(
    skills: Sequence[Skill], chosen_options: Sequence[ValidationOptions]
) -> list[_Outcome]:
    """The ``name-duplicate`` outcome of each skill: each set of options weighs the name clashes
    of its own skills (one set: the common case)."""
    distinct = {id(chosen): chosen for chosen in chosen_options}
    duplicates_by_options = {
        key: duplicate_name_findings_by_file(skills, chosen) for key, chosen in distinct.items()
    }
    found = []
    for skill, chosen in zip(skills, chosen_options, strict=True):
        duplicates = duplicates_by_options[id(chosen)]
        # (no duplicate names is the common case: no path hashed for it)
        found.append(duplicates.get(skill.skill_file, _NO_FINDINGS) if duplicates else _NO_FINDINGS)
    return found
