"""Settings that exist both as a command-line flag and as an ini option.

Each glue module declares its settings as :class:`Setting` objects; the
plugin registers every one of them as a flag *and* an ini twin, and resolves
them with one precedence: command line, then ini file, then environment
variable (where one is named), then the default.  Bad values become
``pytest.UsageError`` naming the flag, the value and the choices.

This module has no pytest import at module level so that the CLI and the
documentation check can read the table without pytest's machinery.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import ConfigurationError

SettingKind = Literal["string", "choice", "bool", "int", "float", "list"]


@dataclass(frozen=True)
class Setting:
    """One configurable value with a flag, an ini twin and a default."""

    ini: str
    help: str
    kind: SettingKind = "string"
    default: Any = None
    choices: tuple[str, ...] = ()
    flag: str = ""
    env: str = ""
    metavar: str = ""
    section: str = "general"

    @property
    def flag_name(self) -> str:
        return self.flag or "--" + self.ini.replace("_", "-")

    @property
    def dest(self) -> str:
        return "agent_skills_" + self.ini

    def describe_default(self) -> str:
        if self.default is None or self.default == [] or self.default == "":
            return "(none)"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)


@dataclass
class SettingsRegistry:
    """All settings known to the plugin, in registration order."""

    settings: dict[str, Setting] = field(default_factory=dict)

    def add(self, *settings: Setting) -> None:
        for setting in settings:
            if setting.ini in self.settings:
                raise ValueError(f"setting {setting.ini!r} declared twice")
            self.settings[setting.ini] = setting

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.settings.values())

    def __getitem__(self, ini: str) -> Setting:
        return self.settings[ini]


REGISTRY = SettingsRegistry()


def declare(*settings: Setting) -> tuple[Setting, ...]:
    """Add settings to the global registry (called at import of a glue module)."""
    REGISTRY.add(*settings)
    return settings


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def convert(setting: Setting, raw: Any, origin: str) -> Any:
    """Turn a raw flag / ini / env value into the setting's type, or raise."""
    kind = setting.kind
    if kind == "list":
        if isinstance(raw, str):
            return raw.split()
        return [str(item) for item in raw if str(item).strip()]
    if isinstance(raw, (list, tuple)):
        raw = raw[-1] if raw else ""
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ConfigurationError(
            f"{origin}: invalid value {raw!r} for {setting.flag_name} (use one of: true, false)"
        )
    text = str(raw).strip()
    if kind == "choice":
        if text not in setting.choices:
            raise ConfigurationError(
                f"{origin}: invalid choice {text!r} for {setting.flag_name}"
                f" (choose from {', '.join(setting.choices)})"
            )
        return text
    if kind in ("int", "float"):
        try:
            return int(text) if kind == "int" else float(text)
        except ValueError:
            raise ConfigurationError(
                f"{origin}: {setting.flag_name} needs a number, got {raw!r}"
            ) from None
    return text


def resolve(
    setting: Setting, cli_value: Any, ini_value: Any, environ: dict[str, str] | None = None
) -> Any:
    """Apply the precedence: command line > ini > environment > default."""
    environ = os.environ if environ is None else environ
    if cli_value not in (None, []):
        return convert(setting, cli_value, "command line")
    if ini_value not in (None, "", []):
        return convert(setting, ini_value, f"ini option {setting.ini}")
    if setting.env and environ.get(setting.env, "") != "":
        return convert(setting, environ[setting.env], f"environment variable {setting.env}")
    return setting.default


def add_to_parser(parser: Any, settings: Iterable[Setting]) -> None:
    """Register each setting as a flag in our option group and as an ini option."""
    group = parser.getgroup("agent-skills", "Agent Skills testing (pytest-agent-skills)")
    for setting in settings:
        flag_kwargs: dict[str, Any] = {
            "dest": setting.dest,
            "default": None,
            "help": _flag_help(setting),
        }
        if setting.kind == "bool":
            flag_kwargs["action"] = "store_const"
            flag_kwargs["const"] = True
        elif setting.kind == "list":
            flag_kwargs["action"] = "append"
            flag_kwargs["metavar"] = setting.metavar or "VALUE"
        else:
            flag_kwargs["metavar"] = setting.metavar or (
                "{" + ",".join(setting.choices) + "}" if setting.choices else "VALUE"
            )
        group.addoption(setting.flag_name, **flag_kwargs)
        ini_type = "linelist" if setting.kind == "list" else "string"
        parser.addini(
            setting.ini,
            help=_ini_help(setting),
            type=ini_type,
            default=[] if ini_type == "linelist" else "",
        )


def _flag_help(setting: Setting) -> str:
    env = f"env: {setting.env}; " if setting.env else ""
    return f"{setting.help} (ini: {setting.ini}; {env}default: {setting.describe_default()})"


def _ini_help(setting: Setting) -> str:
    return f"{setting.help} (flag: {setting.flag_name})"


def value(config: Any, ini: str) -> Any:
    """The resolved value of a setting for a pytest ``Config`` (cached per config)."""
    cache = _settings_cache(config)
    if ini not in cache:
        setting = REGISTRY[ini]
        cli_value = config.getoption(setting.dest)
        ini_value = config.getini(setting.ini)
        cache[ini] = resolve(setting, cli_value, ini_value)
    return cache[ini]


def active(config: Any) -> list[tuple[Setting, Any]]:
    """Every setting with its resolved value, for the report header."""
    return [(setting, value(config, setting.ini)) for setting in REGISTRY]


_cache_key: Any = None


def _settings_cache(config: Any) -> dict[str, Any]:
    global _cache_key
    if _cache_key is None:
        import pytest

        _cache_key = pytest.StashKey[dict]()
    return config.stash.setdefault(_cache_key, {})


def load_all() -> SettingsRegistry:
    """The registry with every glue module's settings declared (as pytest would load them)."""
    import importlib

    from . import plugin

    for module in plugin.pytest_plugins:
        importlib.import_module(module)
    return REGISTRY


def markdown_table(registry: SettingsRegistry) -> str:
    """The configuration table of the README: one row per setting."""
    rows = [
        "| flag | ini option | environment | default | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting in registry:
        meaning = setting.help
        if setting.choices:
            meaning += f" (one of: {', '.join(setting.choices)})"
        environment = f"`{setting.env}`" if setting.env else ""
        rows.append(
            f"| `{setting.flag_name}` | `{setting.ini}` | {environment}"
            f" | `{setting.describe_default()}` | {meaning} |"
        )
    return "\n".join(rows) + "\n"
