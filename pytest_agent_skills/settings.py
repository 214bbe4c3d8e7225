"""Settings that exist as a command-line flag, an environment variable and an ini option.

Each concern declares its settings as :class:`Setting` objects (in
:mod:`pytest_agent_skills.config`, or in its glue module); the plugin registers
every one of them as a flag *and* an ini twin, and resolves them with one
precedence, as pip, ruff and pytest-django do: the command line (a flag, or
``-o name=value``), then the environment variable, then the configuration file,
then the default.  Bad values become ``pytest.UsageError`` naming where the value
came from, the value and the choices.

The ``agent-skills`` command reads the same configuration file as pytest
(:class:`ConfigFile`), so both agree on one repository.

This module has no pytest import at module level so that the CLI and the
documentation check can read the table without pytest's machinery.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from .errors import ConfigurationError

#: The glue modules, registered as pytest plugins by the plugin (in this order: the order of
#: their settings in ``--help``).  Here, not in the plugin, so that :func:`load_all` finds
#: them without importing pytest's entry point.
GLUE_PLUGINS = (
    "pytest_agent_skills.glue.skills_collection",
    "pytest_agent_skills.glue.expected_files",
    "pytest_agent_skills.glue.workspace_fixtures",
    "pytest_agent_skills.glue.scenarios",
    "pytest_agent_skills.glue.sources_options",
    "pytest_agent_skills.glue.evals",
    "pytest_agent_skills.glue.trigger_matrix",
    "pytest_agent_skills.glue.mutation",
    "pytest_agent_skills.glue.audit",
)

#: The modules declaring settings, in the order pytest loads them: the shared roots first
#: (the plugin's own), then each glue module (which loads the ``config`` module it stands on).
SETTING_MODULES = (
    "pytest_agent_skills.config.roots",
    "pytest_agent_skills.config.gate",
    *GLUE_PLUGINS,
)

#: The modules declaring the settings an ``agent-skills`` command takes as flags (``commands``):
#: none imports pytest, so that a command reads its flags without pytest's start-up.  A test
#: refuses a setting with ``commands`` declared anywhere else.
COMMAND_SETTING_MODULES = (
    "pytest_agent_skills.config.roots",
    "pytest_agent_skills.config.gate",
    "pytest_agent_skills.config.validation",
    "pytest_agent_skills.config.runtimes",
    "pytest_agent_skills.config.runs",
    "pytest_agent_skills.evals.setup.eval_settings",
    "pytest_agent_skills.evals.triggers.trigger_settings",
    "pytest_agent_skills.config.mutation",
    "pytest_agent_skills.config.audit",
)

SettingKind = Literal["string", "choice", "bool", "int", "float", "list", "params"]

#: The ini type each kind is registered with, so that pytest 9's native ``[tool.pytest]``
#: table takes TOML booleans, numbers and arrays (and ini files their text forms).
_INI_TYPES: dict[str, str] = {
    "bool": "bool",
    "int": "int",
    "float": "float",
    "list": "linelist",
    "params": "linelist",
}


# A NamedTuple, not a dataclass: the class is made at every pytest start-up, and a dataclass
# generates and compiles its methods then.
class Setting(NamedTuple):
    """One configurable value with a flag, an environment variable, an ini twin and a default.

    ``env`` defaults to the ini name in capitals (``skills_coverage`` -> ``SKILLS_COVERAGE``).
    A ``bool`` flag is a switch (``--skills-coverage``) unless ``flag_takes_value``, where it
    takes ``true`` or ``false`` (``--skills-validate false``).

    ``commands`` names the ``agent-skills`` commands that take the setting as a flag too
    (:func:`pytest_agent_skills.config.file_settings.add_command_flags` adds it to each);
    ``command_flag`` is its flag there, by default the pytest flag without its ``skills-``
    (``--skills-profile`` -> ``--profile``).

    ``one_per_line``: a ``list`` whose items hold spaces (a suppression's reason): a text (an
    environment variable's) is split by lines only, never at spaces.

    ``default``, when not given (None): off for a ``bool``, empty for a ``list`` and ``params``
    (:func:`declare` fills it in).
    """

    ini: str
    help: str
    kind: SettingKind = "string"
    default: Any = None
    choices: tuple[str, ...] = ()
    flag: str = ""
    env: str = ""
    metavar: str = ""
    section: str = "general"
    flag_takes_value: bool = False
    commands: tuple[str, ...] = ()
    command_flag: str = ""
    #: The default in words, where it is worked out when the value is not set (the system's
    #: temporary folder); the help, the README and every command show it.
    default_shown: str = ""
    one_per_line: bool = False

    @property
    def flag_name(self) -> str:
        return self.flag or "--" + self.ini.replace("_", "-")

    @property
    def command_flag_name(self) -> str:
        return self.command_flag or self.flag_name.replace("--skills-", "--", 1)

    @property
    def env_name(self) -> str:
        return self.env or self.ini.upper()

    @property
    def dest(self) -> str:
        return "agent_skills_" + self.ini

    @property
    def ini_type(self) -> str:
        return _INI_TYPES.get(self.kind, "string")

    def describe_default(self) -> str:
        if self.default_shown:
            return self.default_shown
        if self.default is None or self.default in ([], {}, ""):
            return "(none)"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)


class SettingsRegistry:
    """All settings known to the plugin, in registration order."""

    def __init__(self) -> None:
        self.settings: dict[str, Setting] = {}

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


def declare(*settings: Setting, **shared: Any) -> tuple[Setting, ...]:
    """Add settings to the global registry (called at import of a glue module); ``shared``:
    fields all of them have (``section="mutation"``), written once."""
    declared = tuple(_with_default(setting._replace(**shared)) for setting in settings)
    REGISTRY.add(*declared)
    return declared


#: The default of a setting of these kinds that gives none: a switch is off, a list and a set
#: of request parameters empty (made for each setting: none shares another's).
_EMPTY_DEFAULTS: dict[str, Callable[[], Any]] = {"bool": bool, "list": list, "params": dict}


def _with_default(setting: Setting) -> Setting:
    empty = _EMPTY_DEFAULTS.get(setting.kind)
    if empty is None or setting.default is not None:
        return setting
    return setting._replace(default=empty())


_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f", ""}


def convert(setting: Setting, raw: Any, origin: str) -> Any:
    """Turn a raw flag / environment / ini value into the setting's type, or raise.

    A list given as one text is split: by lines when it has several (stripped, blank ones
    dropped, as pytest reads a configuration file's), else by whitespace (an environment
    variable's ``a b``) unless the setting is ``one_per_line``.  Request parameters
    (``params``) become a mapping of names to JSON values (see
    :mod:`pytest_agent_skills.request_params`).
    """
    kind = setting.kind
    if kind == "params":
        from .request_params import parse_params

        return parse_params(raw, origin, setting.flag_name)
    if kind == "list":
        if isinstance(raw, str):
            return _lines(raw) if "\n" in raw or setting.one_per_line else raw.split()
        return [str(item).strip() for item in raw if str(item).strip()]
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
        if isinstance(raw, bool):  # TOML true is not a number
            raw = str(raw).lower()
        try:
            return int(text) if kind == "int" else float(text)
        except ValueError:
            raise ConfigurationError(
                f"{origin}: {setting.flag_name} needs a number, got {raw!r}"
            ) from None
    return text


def _lines(text: str) -> list[str]:
    """The non-blank lines of ``text``, stripped: a list option's lines, as pytest's
    ``linelist`` reads them."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _is_set(raw: Any) -> bool:
    return raw is not None and not (isinstance(raw, (str, list, tuple)) and len(raw) == 0)


def resolve(
    setting: Setting,
    cli_value: Any,
    ini_value: Any,
    environ: Mapping[str, str] | None = None,
    *,
    cli_origin: str = "command line",
    ini_origin: str = "",
) -> Any:
    """Apply the precedence: command line > environment variable > ini file > default."""
    return _resolved(setting, cli_value, ini_value, environ, cli_origin, ini_origin)[0]


def _resolved(
    setting: Setting,
    cli_value: Any,
    ini_value: Any,
    environ: Mapping[str, str] | None,
    cli_origin: str,
    ini_origin: str,
) -> tuple[Any, str]:
    """The value :func:`resolve` gives and where it comes from (``default`` when unset)."""
    environ = os.environ if environ is None else environ
    for raw, origin in (
        (cli_value, cli_origin),
        (environ.get(setting.env_name), f"environment variable {setting.env_name}"),
        (ini_value, ini_origin or f"ini option {setting.ini}"),
    ):
        if _is_set(raw):
            return convert(setting, raw, origin), origin
    return setting.default, "default"


def add_to_parser(parser: Any, settings: Iterable[Setting]) -> None:
    """Register each setting as a flag in our option group and as an ini option."""
    group = parser.getgroup("agent-skills", "Agent Skills testing (pytest-agent-skills)")
    for setting in settings:
        group.addoption(setting.flag_name, **flag_keywords(setting, setting.dest))
        # default=None tells "not in the file" from any value, so the environment can win.
        parser.addini(setting.ini, help=_ini_help(setting), type=setting.ini_type, default=None)


def flag_keywords(setting: Setting, dest: str) -> dict[str, Any]:
    """The argparse keywords of the setting's flag (pytest's ``addoption`` takes argparse's):
    not given, it is None, so that the environment and the file can win; its help names the
    ini option, the variable and the default."""
    keywords: dict[str, Any] = {"dest": dest, "default": None, "help": _flag_help(setting)}
    if setting.kind == "bool" and not setting.flag_takes_value:
        keywords["action"] = "store_const"
        keywords["const"] = True
    elif setting.kind in ("list", "params"):
        keywords["action"] = "append"
        keywords["metavar"] = setting.metavar or "VALUE"
    else:
        choices = setting.choices or (("true", "false") if setting.kind == "bool" else ())
        keywords["metavar"] = setting.metavar or (
            "{" + ",".join(choices) + "}" if choices else "VALUE"
        )
    return keywords


def _flag_help(setting: Setting) -> str:
    # argparse formats help with %: a literal one is doubled.
    return (
        f"{setting.help} (ini: {setting.ini}; env: {setting.env_name};"
        f" default: {setting.describe_default()})"
    ).replace("%", "%%")


def _ini_help(setting: Setting) -> str:
    return f"{setting.help} (flag: {setting.flag_name})"


def value(config: Any, ini: str) -> Any:
    """The resolved value of a setting for a pytest ``Config`` (cached per config)."""
    cache = _settings_cache(config)
    if ini not in cache:
        cache[ini] = _resolved_for_config(config, REGISTRY[ini])[0]
    return cache[ini]


def origin(config: Any, ini: str) -> str:
    """Where the value of a setting comes from (the flag, the variable, the ini file), for
    messages about its content."""
    return _resolved_for_config(config, REGISTRY[ini])[1]


class SettingValues(Protocol):
    """Resolved settings, whoever resolved them (pytest's :class:`PluginSettings`, a command's
    :class:`~pytest_agent_skills.config.file_settings.FileSettings`): what the option builders
    of :mod:`pytest_agent_skills.config` read."""

    def __call__(self, ini: str) -> Any:
        """The value of the setting named ``ini``."""

    def origin(self, ini: str) -> str:
        """Where that value comes from (a flag, a variable, a file and option), for
        messages."""

    @property
    def base_dir(self) -> Path:
        """The folder relative paths of the configuration are taken from (the rootdir)."""


def positive_number(
    values: SettingValues, ini: str, unit: str, at_most: float | None = None
) -> Any:
    """The number setting ``ini`` has in ``values``, refused unless above 0 (and at most
    ``at_most``), with a message naming where it was set."""
    number = values(ini)
    if not (number > 0 and (at_most is None or number <= at_most)):
        bound = "" if at_most is None else f", at most {at_most}"
        raise ConfigurationError(
            f"{values.origin(ini)}: {REGISTRY[ini].flag_name} must be a positive number of"
            f" {unit}{bound}, got {number!r}"
        )
    return number


class PluginSettings:
    """The resolved settings of a pytest ``Config``: :class:`SettingValues` whose
    ``base_dir`` is the rootdir."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.base_dir: Path = config.rootpath

    def __call__(self, ini: str) -> Any:
        return value(self.config, ini)

    def origin(self, ini: str) -> str:
        return origin(self.config, ini)


def _resolved_for_config(config: Any, setting: Setting) -> tuple[Any, str]:
    cli_value = config.getoption(setting.dest)
    cli_origin = "command line"
    overridden = _overridden_ini(config)
    if cli_value is None and setting.ini in overridden:
        cli_value, cli_origin = overridden[setting.ini], f"command line (-o {setting.ini})"
    ini_value = None
    if setting.ini not in overridden:
        ini_value = _getini(config, setting)
    origin = f"{config.inipath}: {setting.ini}" if config.inipath else f"ini option {setting.ini}"
    return _resolved(setting, cli_value, ini_value, None, cli_origin, origin)


def _overridden_ini(config: Any) -> dict[str, str]:
    """The ``-o name=value`` options, which count as the command line."""
    overrides: dict[str, str] = {}
    for item in config.getoption("override_ini", None) or ():
        name, sep, text = item.partition("=")
        if sep:
            overrides[name.strip()] = text
    return overrides


def _getini(config: Any, setting: Setting) -> Any:
    import pytest

    try:
        return config.getini(setting.ini)
    except (pytest.UsageError, ValueError, TypeError) as error:
        text = str(error)
        if setting.ini not in text:  # e.g. pytest's "invalid truth value 'maybe'"
            text = f"{config.inipath or 'ini'}: option {setting.ini}: {text}"
        takes = _TAKES.get(setting.kind, "a text")
        raise ConfigurationError(f"{text}; {setting.ini} takes {takes}") from None


#: What a setting of each kind takes, as the message for a value pytest could not read says.
_TAKES = {
    "bool": "true or false",
    "int": "a whole number, such as 3",
    "float": "a number, such as 0.5",
    "list": "a list of values",
    "params": "a list of NAME=VALUE",
}


def active(config: Any) -> list[tuple[Setting, Any]]:
    """Every setting with its resolved value, for the report header."""
    return [(setting, value(config, setting.ini)) for setting in REGISTRY]


_cache_key: Any = None


def _settings_cache(config: Any) -> dict[str, Any]:
    global _cache_key
    if _cache_key is None:
        import pytest

        _cache_key = pytest.StashKey[dict[str, Any]]()
    cache: dict[str, Any] = config.stash.setdefault(_cache_key, {})
    return cache


class ConfigFile:
    """A pytest configuration file and its values (``path`` None: no file), read without
    pytest's start-up (no plugins, no conftest), for the ``agent-skills`` command.

    :class:`~pytest_agent_skills.config.locate.ConfigLocator` finds the file pytest would use
    for a path, as pytest's own search does.
    """

    # A plain class, not a dataclass: this module loads with every pytest run, the CLI alone
    # makes these.
    def __init__(self, path: Path | None, values: Mapping[str, Any]) -> None:
        self.path = path
        self.values = values

    @property
    def base_dir(self) -> Path | None:
        return self.path.parent if self.path else None

    def resolved(
        self, setting: Setting, cli_value: Any, environ: Mapping[str, str] | None, cli_origin: str
    ) -> tuple[Any, str]:
        """The setting's value (``cli_value``, else the environment, else this file, else the
        default) and where it comes from (``cli_origin`` names the flag)."""
        origin = f"{self.path}: {setting.ini}" if self.path else f"ini option {setting.ini}"
        raw = self.values.get(setting.ini)
        if setting.kind == "list" and isinstance(raw, str):  # an ini file's lines
            raw = _lines(raw)
        return _resolved(setting, cli_value, raw, environ, cli_origin, origin)


def command_settings(command: str) -> list[Setting]:
    """The settings the ``agent-skills`` command ``command`` takes as flags, in the order
    they are declared."""
    import importlib

    for module in COMMAND_SETTING_MODULES:
        importlib.import_module(module)
    return [setting for setting in REGISTRY if command in setting.commands]


def load_all() -> SettingsRegistry:
    """The registry with every setting declared, in the order pytest loads them."""
    import importlib

    for module in SETTING_MODULES:
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
        rows.append(
            f"| `{setting.flag_name}` | `{setting.ini}` | `{setting.env_name}`"
            f" | `{setting.describe_default()}` | {meaning} |"
        )
    return "\n".join(rows) + "\n"
