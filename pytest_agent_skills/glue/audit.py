"""pytest items of the audit: with ``skills_audit = true`` each collected skill has an item
``audit`` (``skills/pdf/SKILL.md::audit``) that fails when a finding of the static audit
(and of the detonation run, with ``skills_audit_dynamic``) reaches ``skills_audit_fail_on``.
The work is :mod:`pytest_agent_skills.audit`'s; this module maps it onto items."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .. import settings
from ..config.audit import AUDIT_SETTINGS, audit_options
from . import FailureTextItem, ItemFailed, usage_errors
from .roots import relative_path

if TYPE_CHECKING:
    from ..audit.options import AuditOptions
    from ..audit.run import AuditRun
    from ..audit.seam import DynamicAnalysis

AUDIT_ITEM_NAME = "audit"
_OPTIONS_KEY = pytest.StashKey["AuditOptions"]()
_DYNAMIC_KEY = pytest.StashKey["DynamicAnalysis"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    settings.add_to_parser(parser, AUDIT_SETTINGS)


def enabled(config: pytest.Config) -> bool:
    return bool(settings.value(config, "skills_audit"))


def _options(config: pytest.Config) -> AuditOptions:
    if _OPTIONS_KEY not in config.stash:
        with usage_errors():
            config.stash[_OPTIONS_KEY] = audit_options(settings.PluginSettings(config))
    return config.stash[_OPTIONS_KEY]


def _analysis(config: pytest.Config) -> DynamicAnalysis | None:
    """The session's detonation run (started by the first audit item that needs it)."""
    if not _options(config).dynamic:
        return None
    if _DYNAMIC_KEY not in config.stash:
        from ..audit.detonation import start_dynamic
        from ..audit.seam import DynamicOptions

        config.stash[_DYNAMIC_KEY] = start_dynamic(DynamicOptions())
    return config.stash[_DYNAMIC_KEY]


def pytest_configure(config: pytest.Config) -> None:
    if enabled(config):  # a bad setting is a usage error before any test runs
        _options(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    analysis = config.stash.get(_DYNAMIC_KEY, None)
    if analysis is not None:
        analysis.close()


class AuditItem(FailureTextItem):
    """The audit of one skill (the folder of the parent's SKILL.md)."""

    def runtest(self) -> None:
        from ..audit.formats import to_text
        from ..audit.run import audit_folders

        options = _options(self.config)
        run: AuditRun = audit_folders([(self.path.parent, options)], _analysis(self.config))
        if run.failed:
            # The skill's folder as pytest shows paths: from the rootdir.
            shown = relative_path(self.path.parent, self.config.rootpath)
            skills = [skill.model_copy(update={"path": shown}) for skill in run.document.skills]
            document = run.document.model_copy(update={"skills": skills})
            # Found at or above skills_audit_fail_on.
            raise ItemFailed(to_text(run._replace(document=document)))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"audit of skill {self.parent.name if self.parent else ''}"
