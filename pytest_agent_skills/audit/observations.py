"""What one detonation run did, read from its supervisor's report, as dynamic findings.

Rules (``analysis: "dynamic"``):

- ``dynamic-exfiltration`` (critical): a canary left the run in a connection's bytes;
- ``dynamic-honeytoken-read`` (high): a honeytoken of the fake HOME was read;
- ``dynamic-canary-output`` (high): a canary in the command's output or in a file it wrote;
- ``dynamic-persistence`` (high): a write (done or refused) to a shell rc file or another
  HOME dotfile, an agent memory file (CLAUDE.md, AGENTS.md, ...), or a system folder;
- ``dynamic-process-left`` (high): a process still running when the command's shell ended;
- ``dynamic-egress`` (medium): a connection attempt or a name lookup (every route leads to
  the sink: none of it leaves the machine);
- ``dynamic-temp-write`` (low): a file left in ``/tmp``, ``/var/tmp``, ``/run`` or a
  HOME cache folder.

A run cut by its time or output bound, or one that could not be set up, is a
``not_analyzed`` entry: what it would have done after is not known.
"""

from __future__ import annotations

import base64
import posixpath
import re
from typing import Any

from .honeytokens import HOME, Bait
from .isolation import CONTROL, SCRATCH, TRACE_FOLDER, WORKSPACE
from .model import AuditFinding, NotAnalyzed
from .runs import PlannedRun
from .severity import Severity
from .trace import file_calls, is_under

MEMORY_FILES = frozenset(
    {"claude.md", "agents.md", "gemini.md", ".cursorrules", "copilot-instructions.md"}
)
#: Writes here are the run's own business (or the kernel's pseudo files).
ALLOWED_WRITES = (
    WORKSPACE,
    HOME,
    *SCRATCH,
    TRACE_FOLDER,
    "/dev",
    "/proc/self",
    "/proc/thread-self",
)
#: The programs that own a honeytoken (by its first component under HOME): their reading it is
#: their job, not a theft.
_OWNERS = {
    ".ssh": frozenset({"ssh", "scp", "sftp", "ssh-add", "ssh-keygen", "ssh-agent"}),
    ".aws": frozenset({"aws"}),
    ".netrc": frozenset({"git-remote-http", "git-remote-https", "ftp", "lftp"}),
    ".git-credentials": frozenset({"git-credential-store", "git"}),
    ".config": frozenset({"gh"}),
}
#: What an interactive shell says first when its input is not a terminal (a reverse shell).
_SHELL_PROMPT = re.compile(
    r"job control turned off|no job control in this shell|cannot set terminal process group"
)
#: HOME's shell start-up files: a run's report holds what a changed one contains.
SHELL_STARTUP = tuple(
    f"{HOME}/{name}"
    for name in (
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
    )
)
#: A line that only sets a variable (``export KEY=value``), as setup docs tell the user to add.
_SETTING_LINE = re.compile(
    r"""\s*(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)="""
    r"""(?:"[^"$`\\]*"|'[^'$`]*'|[^\s;|&$`()<>'"\\]*)\s*"""
)
#: Variables whose value a shell or a program runs or loads: setting one is not "a setting".
_RUN_VARIABLES = frozenset(
    {
        "PATH", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "BASH_ENV", "ENV", "LD_PRELOAD",
        "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME",
        "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "GIT_SSH_COMMAND", "EDITOR", "VISUAL", "PAGER",
    }
)  # fmt: skip
#: Where a write makes code run (or be trusted) at a later login, shell or start: HOME's.
HOME_PERSISTENCE = tuple(
    f"{HOME}/{relative}"
    for relative in (
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zprofile", ".zshenv", ".zlogin", ".cshrc", ".tcshrc", ".config/fish", ".pam_environment",
        ".xprofile", ".xinitrc", ".xsessionrc", ".ssh", ".config/autostart", ".config/systemd",
        ".local/bin", "bin", ".gitconfig", ".config/git",
    )
)  # fmt: skip
#: ... and the system's (every one read-only in the run: an attempt is what is seen).
SYSTEM_PERSISTENCE = (
    "/etc/cron.d", "/etc/cron.daily", "/etc/cron.hourly", "/etc/crontab", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/environment",
    "/etc/ld.so.preload", "/etc/rc.local", "/etc/init.d", "/etc/systemd", "/etc/passwd",
    "/etc/shadow", "/etc/group", "/etc/ssh", "/etc/pam.d", "/var/spool/cron", "/usr/lib/systemd",
    "/lib/systemd", "/root", "/usr/bin", "/usr/sbin", "/bin", "/sbin",
)  # fmt: skip
#: HOME folders a tool fills on its own (a cache is not persistence).
HOME_CACHES = (
    f"{HOME}/.cache",
    f"{HOME}/.local/share",
    f"{HOME}/.npm",
    f"{HOME}/.config/matplotlib",
    f"{HOME}/.local/lib",
)
EVIDENCE_CHARS = 300


class RunReading:
    """The findings of one run (``planned``) from its report, the bait it carried known."""

    def __init__(
        self, planned: PlannedRun, report: dict[str, Any], bait: Bait, cwd: str, declared: str = ""
    ) -> None:
        self.planned, self.report, self.bait, self.cwd = planned, report, bait, cwd
        #: What the skill says of itself (name, description), lower case.
        self.declared = declared.lower()
        self.variants = bait.variants()
        self.findings: list[AuditFinding] = []
        self.not_analyzed: list[NotAnalyzed] = []

    def add(self, rule: str, severity: Severity, message: str, evidence: str) -> None:
        origin = f"{self.planned.origin} `{_short(self.planned.command)}`"
        finding = AuditFinding(
            rule=rule,
            severity=severity,
            analysis="dynamic",
            file=self.planned.file,
            line=self.planned.line,
            message=f"{message} (when run: {origin})",
            evidence=evidence[:EVIDENCE_CHARS],
        )
        if finding not in self.findings:
            self.findings.append(finding)

    def read(self) -> RunReading:
        report = self.report
        errors = report.get("setup_errors") or []
        if errors:
            reason = "; ".join(str(error) for error in errors)
            self.skip(f"the detonation run could not be set up: {reason}")
            if "exit_code" not in report:
                return self
        if report.get("timed_out"):
            self.skip("the run was cut at its time bound: what it does after is not known")
        if report.get("output_cut"):
            self.skip("the run's output passed its bound: the rest was not searched")
        self._egress()
        self._honeytokens()
        self._outputs()
        self._writes()
        for process in report.get("left_running") or []:
            self.add(
                "dynamic-process-left",
                "high",
                "a process was still running after the command ended (a daemon, a dropper,"
                " a reverse shell waiting)",
                str(process.get("command", "")),
            )
        return self

    def skip(self, reason: str) -> None:
        self.not_analyzed.append(
            NotAnalyzed(file=self.planned.file, reason=f"{reason} ({_short(self.planned.command)})")
        )

    def _egress(self) -> None:
        named = set()
        for connection in self.report.get("connections") or []:
            target = (
                f"{connection.get('name') or connection.get('address')}:{connection.get('port')}"
            )
            named.add(connection.get("name"))
            payload = base64.b64decode(str(connection.get("payload") or "")).decode("latin-1")
            leaked = self._canaries_in(payload)
            if leaked:
                self.add(
                    "dynamic-exfiltration",
                    "critical",
                    f"sent {', '.join(leaked)} to {target} ({connection.get('protocol')})",
                    _printable(payload),
                )
            if _SHELL_PROMPT.search(payload):
                self.add(
                    "dynamic-egress",
                    "high",
                    f"handed a shell to {target}: a shell's prompt came over the connection (a"
                    " reverse shell)",
                    _printable(payload),
                )
            self.add(
                "dynamic-egress",
                "medium",
                f"connected to {target} ({connection.get('protocol')}, {connection.get('size')}"
                " bytes sent to the sink)",
                _printable(payload),
            )
        # Each name once, in the order looked up (A and AAAA queries come in pairs).
        lookups = list(
            dict.fromkeys(str(item.get("name")) for item in self.report.get("lookups") or [])
        )
        # A name carries ~60 characters a label: a secret is spread over several lookups.
        leaked = self._canaries_in(_leading_labels(lookups))
        if leaked:
            self.add(
                "dynamic-exfiltration",
                "critical",
                f"sent {', '.join(leaked)} out inside the DNS names it looked up",
                " ".join(lookups),
            )
        for name in lookups:
            if name not in named:
                self.add("dynamic-egress", "medium", f"looked up {name}", name)

    def _honeytokens(self) -> None:
        read = set(self.report.get("honeytokens_read") or [])
        planted = {f"{HOME}/{relative}" for relative in self.bait.files}
        readers: dict[str, set[str]] = {}
        for call in file_calls(str(self.report.get("trace") or ""), self.cwd):
            if call.path in planted and not call.result.startswith("-1"):
                read.add(call.path)
                readers.setdefault(call.path, set()).add(call.program)
        for path in sorted(read):
            owners = _OWNERS.get(posixpath.relpath(path, HOME).split("/")[0], frozenset())
            if readers.get(path) and readers[path] <= owners:
                continue  # the credential's own tool using it (ssh its key, gh its token)
            self.add(
                "dynamic-honeytoken-read",
                "high",
                f"read the credentials file ~/{posixpath.relpath(path, HOME)} of the fake HOME",
                path,
            )

    def _outputs(self) -> None:
        for stream in ("stdout", "stderr"):
            text = base64.b64decode(str(self.report.get(stream) or "")).decode("latin-1")
            leaked = self._canaries_in(text)
            if leaked:
                self.add(
                    "dynamic-canary-output",
                    "high",
                    f"wrote {', '.join(leaked)} to its {stream}",
                    _printable(text),
                )
        for found in self.report.get("canary_files") or []:
            canary = str(found.get("canary"))
            self.add(
                "dynamic-canary-output",
                "high",
                f"wrote the secret of {self.bait.canaries.get(canary, 'a honeytoken')} into"
                f" {found.get('path')}",
                str(found.get("path")),
            )

    def _writes(self) -> None:
        others: dict[str, list[str]] = {"home": [], "scratch": [], "system": []}
        for change in self.report.get("changes") or []:
            path = str(change.get("path"))
            content = change.get("content")
            self._write(path, others, None if content is None else str(content))
        for call in file_calls(str(self.report.get("trace") or ""), self.cwd):
            if not call.writes or "EEXIST" in call.result:  # 'mkdir -p' walks its parents
                continue
            if not is_under(call.path, ALLOWED_WRITES):
                if is_under(call.path, SYSTEM_PERSISTENCE):
                    self.add(
                        "dynamic-persistence",
                        "high",
                        f"tried to write {call.path}, where code runs at a later start or login"
                        f" ({call.call}: {call.result or 'unfinished'})",
                        call.path,
                    )
                else:
                    others["system"].append(call.path)
            elif posixpath.basename(call.path).lower() in MEMORY_FILES:
                self._write(call.path, others)
            elif "/.git/hooks/" in call.path:
                self.add(
                    "dynamic-persistence",
                    "high",
                    f"wrote a git hook, {call.path}: code git runs at a later commit or checkout"
                    f" ({call.call}: {call.result or 'unfinished'})",
                    call.path,
                )
        self._summed(
            "dynamic-persistence",
            "medium",
            others["home"],
            "wrote in HOME (a tool's own configuration or data, not a file run at start-up)",
        )
        self._summed(
            "dynamic-persistence",
            "medium",
            others["system"],
            "tried to write outside the workspace, in system folders (refused: read-only)",
        )
        self._summed(
            "dynamic-temp-write", "low", others["scratch"], "left files outside the workspace"
        )

    def _write(self, path: str, others: dict[str, list[str]], content: str | None = None) -> None:
        name = posixpath.basename(path).lower()
        if name in MEMORY_FILES and name in self.declared and not is_under(path, (HOME,)):
            self.add(
                "dynamic-persistence",
                "medium",
                f"wrote the agent memory file {path} in the project, as the skill's description"
                " says it does",
                path,
            )
        elif name in MEMORY_FILES:
            self.add(
                "dynamic-persistence",
                "high",
                f"wrote the agent memory file {path}: instructions every later session loads",
                path,
            )
        elif content is not None and path in SHELL_STARTUP and _only_settings(content):
            self.add(
                "dynamic-persistence",
                "medium",
                f"added variable settings to {path} (as setup docs tell a user to; no command)",
                content.strip()[:EVIDENCE_CHARS],
            )
        elif is_under(path, HOME_PERSISTENCE):
            self.add(
                "dynamic-persistence",
                "high",
                f"changed {path}: a file run or trusted at every later login or shell",
                path,
            )
        elif is_under(path, (HOME,)) and not is_under(path, HOME_CACHES):
            others["home"].append(path)
        elif not is_under(path, (WORKSPACE, CONTROL)):
            others["scratch"].append(path)

    def _summed(self, rule: str, severity: Severity, paths: list[str], what: str) -> None:
        """One finding for many paths of one kind (a tool writes dozens of files at once)."""
        unique = list(dict.fromkeys(paths))
        if unique:
            shown = ", ".join(unique[:5]) + (
                f" and {len(unique) - 5} more" if len(unique) > 5 else ""
            )
            self.add(rule, severity, f"{what}: {shown}", unique[0])

    def _canaries_in(self, text: str) -> list[str]:
        """Where the canaries in ``text`` were planted (an encoder's line breaks ignored)."""
        found = []
        joined = "".join(text.split())
        for variant, canary in self.variants.items():
            place = self.bait.canaries.get(canary, "a canary")
            if (variant in text or variant in joined) and f"the secret of {place}" not in found:
                found.append(f"the secret of {place}")
        return found


def _only_settings(content: str) -> bool:
    """True when every line of ``content`` is blank, a comment or a variable setting."""
    lines = [
        line for line in content.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    matches = [_SETTING_LINE.fullmatch(line) for line in lines]
    return bool(lines) and all(
        match is not None and match["name"] not in _RUN_VARIABLES for match in matches
    )


def _leading_labels(names: list[str]) -> str:
    """The labels of ``names`` before the domain they share (where data rides in a lookup),
    joined: a secret spread over several lookups reads whole again."""
    split = [name.split(".") for name in names]
    shared = 2
    if len(split) > 1:
        shared = 0
        while all(len(labels) > shared + 1 for labels in split) and (
            len({labels[-1 - shared] for labels in split}) == 1
        ):
            shared += 1
    return "".join("".join(labels[: len(labels) - shared]) for labels in split)


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 80 else line[:77] + "..."


def _printable(text: str) -> str:
    return "".join(
        char if char.isprintable() else f"\\x{ord(char):02x}" for char in text[:EVIDENCE_CHARS]
    )
