"""pytest collection of skills: every ``SKILL.md`` becomes a node named after its
skill, with one item, ``validate``, that runs every check and reports every finding of the
skill; ``skills_items = check`` gives one item per check instead (``frontmatter``,
``fields``, ``name``, ...).

One item per skill is the default because a repository of thousands of skills is normal:
pytest's cost grows with the items (each has three reports, and its failure summary looks
through every report for each failure), while the findings are the same either way.

The checks themselves live in :mod:`pytest_agent_skills.rules`; this module
only maps them onto pytest nodes, reports findings (errors fail the item,
warnings become pytest warnings with the SKILL.md location) and collects the
skill roots of ``skills_roots`` (dot-folders such as ``.claude/skills``, URL
roots) that the ordinary walk of the test paths does not reach.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .. import settings
from ..config.validation import VALIDATION_SETTINGS, validation_options
from ..errors import AgentSkillsError
from ..filenames import SKILL_FILE
from ..settings import Setting
from . import usage_errors
from .junit import printable_node_id, with_testcase_properties
from .roots import relative_path, root_files, selected_root_files

if TYPE_CHECKING:  # the rule tables load when a skill is collected, the parser when a check runs
    from ..findings import Finding
    from ..rules import ValidationOptions
    from ..skill import Skill
    from .collection_links import CollectionLinks

_OPTIONS_KEY = pytest.StashKey["ValidationOptions"]()
_SKILL_FILES_KEY = pytest.StashKey[list["SkillFile"]]()
_DUPLICATES_KEY = pytest.StashKey[dict[Path, tuple[list["Finding"], Any]]]()
_LINKS_KEY = pytest.StashKey["CollectionLinks"]()
_CHANGED_KEY = pytest.StashKey[str]()

#: The name of the one item of a skill (``skills/pdf/SKILL.md::validate``).
SKILL_ITEM_NAME = "validate"
ITEM_SHAPES = ("skill", "check")
COLLECTION_SETTINGS = settings.declare(
    Setting(
        ini="skills_items",
        kind="choice",
        choices=ITEM_SHAPES,
        default="skill",
        help="test items of a SKILL.md: skill (one item, 'validate', reporting every failing"
        " check) or check (one item per check: frontmatter, fields, name, ...)",
    ),
    Setting(
        ini="skills_walk_skill_folders",
        kind="bool",
        help="walk every file and folder of skill folders, as pytest walks other folders (for"
        " plugins collecting other file types there); by default pytest enters only what can be"
        " collected: SKILL.md, scenarios, evals, conftest.py, python_files and doctest files",
    ),
)


class SkillWarning(UserWarning):
    """A warning-level finding of a skill check."""


class SkillCheckFailed(AgentSkillsError):
    """Raised by a check item whose findings include an error."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__("\n".join(finding.format() for finding in findings))


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, (*VALIDATION_SETTINGS, *COLLECTION_SETTINGS))


#: The terminal reporter of each session running in this process, the innermost last (see
#: :func:`pytest_runtest_logreport`; pytester runs sessions inside a session).
_TERMINALS: list[object] = []


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    _TERMINALS.append(config.pluginmanager.get_plugin("terminalreporter"))
    config.stash[_SKILL_FILES_KEY] = []
    # Options given are checked before any test runs; defaults cannot be wrong, so with them
    # the rule tables load only when a check first runs.
    if any(settings.value(config, s.ini) != s.default for s in VALIDATION_SETTINGS):
        _options(config)


def _options(config: pytest.Config) -> ValidationOptions:
    if _OPTIONS_KEY not in config.stash:
        with usage_errors():
            config.stash[_OPTIONS_KEY] = validation_options(settings.PluginSettings(config))
    return config.stash[_OPTIONS_KEY]


def _enabled(config: pytest.Config) -> bool:
    return bool(settings.value(config, "skills_validate"))


def _links(config: pytest.Config) -> CollectionLinks:
    """The links this session's collection met (made, and its module loaded, on the first)."""
    if _LINKS_KEY not in config.stash:
        from .collection_links import CollectionLinks

        config.stash[_LINKS_KEY] = CollectionLinks(str(config.rootpath))
    return config.stash[_LINKS_KEY]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # A link back into a folder it is in would make pytest walk those folders without end.
    if os.path.islink(collection_path) and _links(config).leads_back(collection_path):
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest's own Dir and Package
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A skill folder's collector, which enters only where something can be collected (see
    :mod:`~pytest_agent_skills.glue.skill_folders`, loaded with the first skill folder)."""
    if not os.path.isfile(os.path.join(path, SKILL_FILE)):  # one stat for any other folder
        return None
    if settings.value(parent.config, "skills_walk_skill_folders"):
        return None
    from .skill_folders import skill_folder

    return skill_folder(path, parent)


def _collected(config: pytest.Config) -> bool:
    """Whether skills are collected: for their validation, or their audit."""
    from .audit import enabled

    return _enabled(config) or enabled(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SkillFile | None:
    if file_path.name != SKILL_FILE or not _collected(parent.config):
        return None
    return SkillFile.for_path(parent, file_path)


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselect, so root skills obey them too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not _collected(config):
        return
    found = root_files(config).skills
    if found:
        collected = {item.parent.path for item in items if isinstance(item, SkillItem)}
        for path in selected_root_files(session, found):
            if path not in collected:  # else under the test paths too
                collected.add(path)
                items.extend(session.genitems(SkillFile.for_path(session, path)))
    # The skills of this run, in collection order (the first of two with one name wins); pytest
    # also builds, then drops, nodes for the siblings of a file given on the command line.
    files = list({item.parent: None for item in items if isinstance(item, SkillItem)})
    identities = [node.identity for node in files]
    left_out = set()
    if len(set(identities)) < len(identities):  # a skill folder reached a second way
        left_out = _links(config).left_out([(node.path, node.identity) for node in files])
    if left_out:  # a skill folder reached through links: one node for it, the others deselected
        _deselect(config, items, lambda item: getattr(item.parent, "path", None) in left_out)
        files = [node for node in files if node.path not in left_out]
    config.stash[_SKILL_FILES_KEY] = files  # all of them: a name taken by a skill left out counts
    ref = settings.value(config, "skills_changed_since")
    if ref:
        _keep_changed(config, items, [node.path.parent for node in files], ref)


def _keep_changed(
    config: pytest.Config, items: list[pytest.Item], folders: list[Path], ref: str
) -> None:
    """Deselect the items of the skills with no file that differs from the git ``ref``; the
    line saying how many were left out is shown after collection."""
    from ..changes import changed_skills

    where = folders[0] if folders else config.rootpath
    with usage_errors(AgentSkillsError):
        split = changed_skills(folders, ref, where, f"--skills-changed-since {ref}")
    unchanged = set(split.unchanged)
    _deselect(
        config, items, lambda item: isinstance(item, SkillItem) and item.path.parent in unchanged
    )
    config.stash[_CHANGED_KEY] = f"agent-skills: {split.summary()}"


def _deselect(
    config: pytest.Config, items: list[pytest.Item], left_out: Callable[[pytest.Item], bool]
) -> None:
    """Deselect the ``items`` that ``left_out`` says (told to ``pytest_deselected``)."""
    dropped = [item for item in items if left_out(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not left_out(item)]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _TERMINALS:
        _TERMINALS.pop()


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    lines = config.stash[_LINKS_KEY].report_lines() if _LINKS_KEY in config.stash else []
    return [*lines, config.stash[_CHANGED_KEY]] if _CHANGED_KEY in config.stash else lines


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Leave a skill item's passed setup and teardown out of the terminal's statistics when
    they captured nothing: pytest's failure summary looks through all of them for each failure
    (for teardown output to show), which grows as failures x items; such a report shows
    nothing there, and no count or outcome depends on it."""
    if report.when == "call" or not report.passed or report.sections:
        return
    if not report.nodeid.partition("::")[0].endswith(SKILL_FILE):
        return
    statistics = getattr(_TERMINALS[-1], "stats", None) if _TERMINALS else None
    if statistics:
        passed = statistics.get("")
        if passed and passed[-1] is report:
            passed.pop()


class SkillFile(pytest.File):
    """One skill (its ``SKILL.md``), named after the skill; its item ``validate``, or one item
    per check (``skills_items = check``).

    The skill is parsed when a check first runs: collection only reads the name
    (:func:`~pytest_agent_skills.skill_reference.declared_name`), so ``--collect-only``, deselected
    skills and the skills other xdist workers check stay cheap.
    """

    skill_properties: list[tuple[str, str]]
    #: The (device, inode) of the skill folder: one skill however many paths lead to it.
    identity: tuple[int, int] | None
    _skill: Skill | None = None

    @classmethod
    def for_path(cls, parent: pytest.Collector | pytest.Session, path: Path) -> SkillFile:
        from ..files import FileReadError, read_skill_file
        from ..skill import Skill
        from ..skill_reference import declared_name

        skill = None
        try:
            raw = read_skill_file(path.parent, path.name)
            name = declared_name(raw.decode("utf-8", errors="replace"))
            name = name or path.parent.name.strip()
        except (OSError, FileReadError):  # Skill.load reports why
            skill = Skill.load(path.parent)
            name = skill.name
        node = cls.from_parent(parent, path=path, name=name, nodeid=printable_node_id(parent, path))
        node._skill = skill
        try:
            status = os.stat(path.parent)
            node.identity = (status.st_dev, status.st_ino)
        except OSError:
            node.identity = None  # Skill.load says why
        node.skill_properties = []
        if with_testcase_properties(parent.config):
            node.skill_properties = [
                ("skill_name", name),
                ("skill_path", node.nodeid),  # the SKILL.md path relative to the rootdir
            ]
        return node

    @property
    def skill(self) -> Skill:
        if self._skill is None:
            from ..skill import Skill

            self._skill = Skill.load(self.path.parent)
        return self._skill

    def teardown(self) -> None:
        self._skill = None  # parsed again if an item of it runs again

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        if not _enabled(self.config):
            pass
        elif settings.value(self.config, "skills_items") == "skill":
            items.append(SkillItem.from_parent(self, name=SKILL_ITEM_NAME))
        else:
            from ..rules import CHECKS

            items += [SkillCheckItem.from_parent(self, name=c, check=c) for c in CHECKS]
        from .audit import AUDIT_ITEM_NAME, AuditItem, enabled

        if enabled(self.config):
            items.append(AuditItem.from_parent(self, name=AUDIT_ITEM_NAME))
        return items


def relative_to_root(config: pytest.Config, path: Path) -> str:
    """``path`` (absolute) as pytest shows it: from the rootdir, ``../`` when outside it."""
    name, root = os.fspath(path), os.fspath(config.rootpath)
    if name.startswith(root) and name[len(root) : len(root) + 1] == os.sep:
        return name[len(root) + 1 :]  # pytest's path arithmetic, without Path objects
    return relative_path(path, config.rootpath)


class SkillItem(pytest.Item):
    """Every check of one skill: fails with every finding of the skill (errors and warnings,
    check by check) when one is an error."""

    parent: SkillFile

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.parent.skill_properties:  # decided once per skill
            self.user_properties.extend(self.parent.skill_properties)

    def runtest(self) -> None:
        from ..rules import report_skill

        skill = self.parent.skill
        options = _options(self.config)
        duplicates = self._duplicates(options).get(skill.skill_file, ([], []))
        self._conclude(list(report_skill(skill, options, duplicates).findings))

    def _conclude(self, findings: list[Finding]) -> None:
        """Warn for each warning; fail with every finding when one is an error."""
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

    def _duplicates(self, options: ValidationOptions) -> dict[Path, tuple[list[Finding], Any]]:
        """name-duplicate findings by SKILL.md, computed once per session over the skills of
        the run; only skills sharing a node name (the declared name) are parsed for it."""
        if _DUPLICATES_KEY not in self.config.stash:
            from ..rules import duplicate_name_findings_by_file

            by_name: dict[str, list[SkillFile]] = {}
            for node in self.config.stash[_SKILL_FILES_KEY]:
                by_name.setdefault(node.name, []).append(node)
            shared = [node.skill for nodes in by_name.values() if len(nodes) > 1 for node in nodes]
            self.config.stash[_DUPLICATES_KEY] = duplicate_name_findings_by_file(shared, options)
        return self.config.stash[_DUPLICATES_KEY]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, SkillCheckFailed):
            # Each finding as Finding.format writes it, its path relative to the rootdir (the
            # findings of a skill name one or two files: each made relative once).
            shown: dict[Path, Path] = {}
            lines = []
            for finding in excinfo.value.findings:
                if finding.path not in shown:
                    shown[finding.path] = Path(relative_to_root(self.config, finding.path))
                lines.append(finding._replace(path=shown[finding.path]).format())
            return "\n".join(lines)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"skill {self.parent.name}"

    @functools.cached_property
    def location(self) -> tuple[str, int | None, str]:
        """pytest's ``(path from the rootdir, line, description)`` of the item, the path made
        relative by :func:`relative_to_root` (pytest's own way makes Path objects for every
        item, and a run over thousands of skills asks for every item's location)."""
        path, line, description = self.reportinfo()
        return relative_to_root(self.config, path), line, description


class SkillCheckItem(SkillItem):
    """One check (a group of rules) of one skill."""

    def __init__(self, *, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        if self.parent.skill_properties:
            self.user_properties.append(("skill_check", check))

    def runtest(self) -> None:
        from ..rules import FRONT_MATTER_CHECKS, validate_check

        skill = self.parent.skill
        if self.check in FRONT_MATTER_CHECKS and skill.front_matter is None:
            # Reported at the SKILL.md (like a skip marker), not at this line of the plugin.
            raise pytest.skip.Exception(
                "the front matter did not parse: see the frontmatter check",
                _use_item_location=True,
            )
        options = _options(self.config)
        findings = validate_check(skill, self.check, options)
        if self.check == "name":
            findings += self._duplicates(options).get(skill.skill_file, ([], []))[0]
        self._conclude(findings)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"skill {self.parent.name}: {self.check}"
