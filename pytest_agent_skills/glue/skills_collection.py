"""pytest collection of skills: every ``SKILL.md`` becomes a node named after its
skill, with one item per check (``frontmatter``, ``fields``, ``name``, ...).

The checks themselves live in :mod:`pytest_agent_skills.rules`; this module
only maps them onto pytest nodes, reports findings (errors fail the item,
warnings become pytest warnings with the SKILL.md location) and collects the
skill roots of ``skills_roots`` (dot-folders such as ``.claude/skills``, URL
roots) that the ordinary walk of the test paths does not reach.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from .. import settings
from ..errors import AgentSkillsError, ConfigurationError
from ..findings import Finding
from ..repository import RootNotFoundError, find_skill_dirs
from ..rules import CHECKS, ValidationOptions, duplicate_name_findings, validate_check
from ..settings import Setting
from ..skill import SKILL_FILE, Skill

COLLECTION_SETTINGS = settings.declare(
    Setting(
        ini="skills_validate",
        kind="choice",
        choices=("true", "false"),
        default="true",
        env="SKILLS_VALIDATE",
        help="collect SKILL.md files as validation tests",
    ),
    Setting(
        ini="skills_profile",
        kind="choice",
        choices=("spec", "claude-code"),
        default="spec",
        help="validation profile: spec (closed field set) or claude-code (adds its extension"
        " fields)",
    ),
    Setting(
        ini="skills_available_tools",
        flag="--skills-available-tool",
        kind="list",
        default=[],
        metavar="NAME",
        help="tool names a Tools: section may declare (others fail the tools check);"
        " unset: not checked",
    ),
    Setting(
        ini="skills_allow_unknown_fields",
        kind="bool",
        default=False,
        help="report unknown front-matter fields as warnings instead of errors",
    ),
    Setting(
        ini="skills_rule_severity",
        kind="list",
        default=[],
        metavar="RULE=LEVEL",
        help="override a rule's severity: error, warning or off (e.g. body-too-long=off)",
    ),
)

_OPTIONS_KEY = pytest.StashKey[ValidationOptions]()
_SKILLS_KEY = pytest.StashKey[list[Skill]]()


class SkillWarning(UserWarning):
    """A warning-level finding of a skill check."""


class SkillCheckFailed(AgentSkillsError):
    """Raised by a check item whose findings include an error."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__("\n".join(finding.format() for finding in findings))


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, COLLECTION_SETTINGS)


def pytest_configure(config: pytest.Config) -> None:
    available = settings.value(config, "skills_available_tools")
    try:
        options = ValidationOptions.build(
            available_tools=available or None,
            profile=settings.value(config, "skills_profile"),
            allow_unknown_fields=settings.value(config, "skills_allow_unknown_fields"),
            severities=settings.value(config, "skills_rule_severity"),
        )
    except ConfigurationError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[_OPTIONS_KEY] = options
    config.stash[_SKILLS_KEY] = []


def _enabled(config: pytest.Config) -> bool:
    return settings.value(config, "skills_validate") == "true"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SkillFile | None:
    if file_path.name != SKILL_FILE or not _enabled(parent.config):
        return None
    return SkillFile.for_path(parent, file_path)


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselect, so root skills obey them too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not _enabled(config):
        return
    collected = {item.path.resolve() for item in items if isinstance(item, SkillCheckItem)}
    for root in _skill_roots(config):
        for directory in find_skill_dirs(root):
            skill_file = directory / SKILL_FILE
            if skill_file.resolve() in collected:
                continue
            collected.add(skill_file.resolve())
            items.extend(session.genitems(SkillFile.for_path(session, skill_file)))


def _skill_roots(config: pytest.Config) -> list[Path]:
    from ..sources import resolve_root

    refresh = bool(settings.value(config, "skills_refresh"))
    roots: list[Path] = []
    for spec in settings.value(config, "skills_roots"):
        try:
            root = resolve_root(spec, refresh=refresh, base_dir=config.rootpath)
        except AgentSkillsError as error:
            raise pytest.UsageError(f"skills_roots: {error}") from None
        if not root.is_dir():
            raise pytest.UsageError(f"skills_roots: {RootNotFoundError(root)}")
        roots.append(root)
    return roots


class SkillFile(pytest.File):
    """One skill (its ``SKILL.md``), named after the skill; one item per check."""

    skill: Skill

    @classmethod
    def for_path(cls, parent: pytest.Collector | pytest.Session, path: Path) -> SkillFile:
        skill = Skill.load(path.parent)
        node = cls.from_parent(parent, path=path, name=skill.name)
        node.skill = skill
        node.config.stash[_SKILLS_KEY].append(skill)
        return node

    def collect(self) -> list[SkillCheckItem]:
        return [SkillCheckItem.from_parent(self, name=check, check=check) for check in CHECKS]


class SkillCheckItem(pytest.Item):
    """One check (a group of rules) of one skill."""

    parent: SkillFile

    def __init__(self, *, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        skill = self.parent.skill
        self.extra_keyword_matches.add(skill.name)
        self.user_properties.append(("skill_name", skill.name))
        self.user_properties.append(("skill_path", self._relative(skill.skill_file)))
        self.user_properties.append(("skill_check", check))

    def _relative(self, path: Path) -> str:
        from _pytest.pathlib import bestrelpath

        return bestrelpath(self.config.rootpath, path)

    def runtest(self) -> None:
        skill = self.parent.skill
        if self.check not in ("frontmatter", "tools", "references") and skill.front_matter is None:
            # Reported at the SKILL.md (like a skip marker), not at this line of the plugin.
            raise pytest.skip.Exception(
                "the front matter did not parse: see the frontmatter check",
                _use_item_location=True,
            )
        options = self.config.stash[_OPTIONS_KEY]
        findings = validate_check(skill, self.check, options)
        if self.check == "name":
            findings += [
                finding
                for finding in duplicate_name_findings(self.config.stash[_SKILLS_KEY], options)
                if finding.path == skill.skill_file
            ]
        for finding in findings:
            if not finding.is_error:
                warnings.warn_explicit(
                    SkillWarning(f"[{finding.rule}] {finding.message}"),
                    SkillWarning,
                    filename=str(finding.path),
                    lineno=finding.line or 0,
                )
        if any(finding.is_error for finding in findings):
            raise SkillCheckFailed(findings)

    def _format(self, finding: Finding) -> str:
        location = self._relative(finding.path) + (f":{finding.line}" if finding.line else "")
        return f"{location}: {finding.severity} [{finding.rule}] {finding.message}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SkillCheckFailed):
            return "\n".join(self._format(finding) for finding in excinfo.value.findings)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"skill {self.parent.skill.name}: {self.check}"
