"""Rules on what outlives the skill: shell start-up files, scheduled jobs, services, git
hooks, authorized ssh keys, and the memory and instruction files of agents."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .context import Hit, Located
from .severity import Severity

_RC = (
    r"\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile"
    r"|config/fish/config\.fish)\b"
)
_RC_WRITE = re.compile(
    r"(?:>>?|\btee\s+(?:-a\s+)?)\s*[\"']?(?:~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+)?/?"
    + _RC
    + r"|(?:open\(|write_text|appendFile|writeFile|Add-Content|Out-File)[^\n]*"
    + _RC
    + r"|"
    + _RC
    + r"[^\n]*(?:open\([^\n]*[\"']a|\.open\(\s*[\"']a|write_text|appendFile)",
)
_RC_MENTION = re.compile(r"[\"'/]" + _RC)
#: What a skill's documentation asks the user to add to a shell rc file, as is normal.
_DOCUMENTED_LINE = re.compile(
    r"(?:echo|printf)\s+[\"']?\s*(?:export\s+[A-Za-z_]\w*=|alias\s|source\s|\.\s|eval\s+\"?\$\(\w[\w-]*\s+init"
    r"|PATH=|[A-Za-z_]\w*=)"
)

_SCHEDULED: tuple[tuple[re.Pattern[str], Severity, Severity, str], ...] = (
    (
        re.compile(r"(?:>>|tee\s+-a)\s*\S*authorized_keys\b|authorized_keys[\"']?\s*,\s*[\"']a"),
        "critical",
        "critical",
        "adds an ssh key to authorized_keys: a way back in",
    ),
    (
        re.compile(
            r"\|\s*crontab\s+-?(?:\s|$)|\bcrontab\s+(?:-u\s+\w+\s+)?[\w~$-]*[./][\w./~$-]*|/etc/cron\.|/var/spool/cron|@reboot\b"
        ),
        "high",
        "high",
        "installs a scheduled job (cron)",
    ),
    (re.compile(r"\bcrontab\s+-e\b"), "medium", "medium", "edits the crontab"),
    (
        re.compile(
            r"(?:/etc/systemd/system|\.config/systemd/user)/[\w@.-]+\.(?:service|timer)|\bsystemctl\s+(?:--user\s+)?enable\b"
        ),
        "high",
        "medium",
        "installs or enables a service that starts by itself",
    ),
    (
        re.compile(r"Library/Launch(?:Agents|Daemons)|\blaunchctl\s+(?:load|bootstrap)\b"),
        "high",
        "medium",
        "installs a launchd agent that starts by itself",
    ),
    (
        re.compile(
            r"CurrentVersion\\+Run\b|\bschtasks\s+/create\b|\b(?:New|Register)-ScheduledTask\b",
            re.IGNORECASE,
        ),
        "high",
        "medium",
        "installs a Windows start-up entry or scheduled task",
    ),
    (
        re.compile(r"\.git/hooks/[\w-]+|\bcore\.hooksPath\b"),
        "high",
        "medium",
        "installs a git hook: code run by every commit or checkout",
    ),
    (
        re.compile(
            r"/etc/(?:profile\.d/|environment\b|rc\.local\b|ld\.so\.preload\b|bash\.bashrc\b)"
        ),
        "high",
        "high",
        "writes a system-wide start-up file",
    ),
)


_PERSISTENCE_WORDS = (
    "bashrc", "zshrc", "profile", "bash_login", "zlogin", "zshenv", "config.fish",
    "authorized_keys", "cron", "systemd", "systemctl", "launch", "currentversion", "schtasks",
    "scheduledtask", "hooks", "/etc/",
)  # fmt: skip
_MEMORY_WORDS = (
    "claude",
    "agents.md",
    "gemini",
    "memory.md",
    "cursor",
    "windsurfrules",
    "copilot-",
    ".codex",
)


def persistence(located: Located) -> Iterator[Hit]:
    if not located.mentions(_PERSISTENCE_WORDS):
        return
    text = located.text
    code = located.source.kind == "code"
    rc_hits = list(_RC_WRITE.finditer(text)) or (list(_RC_MENTION.finditer(text)) if code else [])
    for match in rc_hits:
        region = located.region(match.start())
        line = located.line_text(match.start())
        # A line documented for the user to add is low, but not in a script, which runs it.
        documented = _DOCUMENTED_LINE.search(line) and "curl" not in line and "wget" not in line
        if documented and not code:
            severity: Severity = "low"
            why = "adds a setting to a shell start-up file (documented for the user)"
        elif region in ("quote", "data"):
            severity, why = "medium", "writes a shell start-up file (shown, not run from here)"
        else:
            severity, why = (
                "high",
                "writes a shell start-up file: code that runs in every new shell",
            )
        yield Hit.at(match, "persistence", severity, why)
    for pattern, in_code, in_docs, message in _SCHEDULED:
        for match in located.scan(pattern, _PERSISTENCE_WORDS):
            severity, _shown = located.weigh(match.start(), in_code if code else in_docs)
            yield Hit.at(match, "persistence", severity, message)


_MEMORY = (
    r"(?:(?<![\w-])(?:CLAUDE|AGENTS|GEMINI|MEMORY)\.md\b|\.cursorrules\b|\.windsurfrules\b"
    r"|copilot-instructions\.md\b|\.cursor/rules\b|\.claude/(?:settings(?:\.local)?\.json|commands|agents|hooks|skills)\b"
    r"|\.codex/|\.gemini/)"
)
_MEMORY_WRITE = re.compile(
    r"(?:>>?|\btee\s+(?:-a\s+)?|\bcp\s+\S+\s+|\bmv\s+\S+\s+|\bln\s+-s\w*\s+\S+\s+)"
    r"\s*[\"']?[^\s\"'|;&]*"
    + _MEMORY
    + r"|(?:open\(|write_text|write_bytes|appendFile|writeFile|Add-Content|Out-File"
    r"|Set-Content)[^\n]*"
    + _MEMORY
    + r"|"
    + _MEMORY
    + r"[^\n]*(?:\.open\(\s*[\"'][aw]|[\"']\s*,\s*[\"'][aw]\+?[\"']|write_text|appendFile)"
    + r"|\b(?:append|add|write|insert|save|put|record)\b[^\n.]{0,60}?\b(?:to|into|in)\s+"
    r"(?:the\s+|your\s+|a\s+)?[`\"']?[^\s`\"']*" + _MEMORY,
    re.IGNORECASE,
)
_HOME = re.compile(
    r"~/|\$HOME|\$\{HOME\}|Path\.home\(\)|expanduser|os\.homedir|/root/|/home/\w", re.IGNORECASE
)
_LASTING = re.compile(
    r"\b(?:always|every\s+(?:future\s+)?(?:session|conversation|task)|from\s+now\s+on|permanently|all\s+future)\b",
    re.IGNORECASE,
)


_MEMORY_MENTION = re.compile(_MEMORY, re.IGNORECASE)
_OPENED_FOR_WRITING = re.compile(
    r"\.open\(\s*[\"'][aw]|\bopen\([^)\n]*,\s*[\"'][aw]|write_text\(|appendFile|writeFile|>>"
)


def memory_poisoning(located: Located) -> Iterator[Hit]:
    if not located.mentions(_MEMORY_WORDS):
        return
    text = located.text
    code = located.source.kind == "code"
    if code and _OPENED_FOR_WRITING.search(text):
        # A script that names a memory file and writes a file: the path may be built over
        # several lines (Path.home() / ".claude" / "CLAUDE.md", then .open("a")).
        for match in _MEMORY_MENTION.finditer(text):
            yield Hit.at(
                match,
                "memory-poisoning",
                "high",
                "a script that writes files names an agent's memory or instruction file:"
                " instructions that outlive the skill",
            )
    for match in _MEMORY_WRITE.finditer(text):
        line = located.line_text(match.start())
        region = located.region(match.start())
        home = bool(_HOME.search(line)) or ".claude/" in match.group() or ".codex/" in match.group()
        if region in ("quote", "data"):
            severity: Severity = "low"
        elif code or home or _LASTING.search(line):
            severity = "high"
        else:
            severity = "low"
        where = "the user's own agent files" if home else "an agent's memory or instruction file"
        yield Hit.at(
            match,
            "memory-poisoning",
            severity,
            f"writes {where}: instructions that outlive the skill",
        )
