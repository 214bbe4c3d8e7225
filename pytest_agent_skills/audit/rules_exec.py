"""Rules on what runs: downloads and decoded data run as code, reverse shells, privilege
escalation, persistence and writes to an agent's memory."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from .context import Hit, Located
from .severity import Severity

_SHELL = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:/\S*/)?(?:ba|z|k|da|fi)?sh\b"
    r"|python[0-9.]*\b|perl\b|ruby\b|node\b|php\b|source\s+/dev/stdin"
)
_DOWNLOAD_EXECUTE = re.compile(
    r"\b(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|;&]*\|\s*(?:"
    + _SHELL
    + r")"
    r"|\b(?:ba|z)?sh\s+(?:-\w+\s+)*[\"']?\$\(\s*(?:curl|wget)\b[^\n]*"
    r"|(?:\b(?:ba|z)?sh|\bsource|(?<![\w.])\.)\s+<\(\s*(?:curl|wget)\b[^\n]*"
    r"|\b(?:iex|Invoke-Expression)\b[^\n]*(?:DownloadString|DownloadFile|\biwr\b|\birm\b|Invoke-WebRequest|Invoke-RestMethod|Net\.WebClient)[^\n]*"
    r"|\b(?:DownloadString|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n]*\|\s*(?:iex|Invoke-Expression)\b"
    r"|\b(?:exec|eval)\s*\((?:[^()\n]|\([^()\n]*\))*?\b(?:urlopen|requests\.get|httpx\.get|urllib\.request)\b[^\n]*",
    re.IGNORECASE,
)
_DOWNLOAD_RUN = re.compile(
    r"\b(?:curl|wget)\b[^\n]*(?:&&|;)\s*chmod\s+(?:\+x|[0-7]?[75][0-7][0-7])\s+(\S+)[^\n]*"
)
_URL = re.compile(r"https?://([^/\s\"'`)]+)(/[^\s\"'`)]*)?")
#: Official installers of well-known tools, where curl | sh is the documented way.
_KNOWN_INSTALLERS = (
    "sh.rustup.rs",
    "astral.sh",
    "brew.sh",
    "raw.githubusercontent.com/homebrew/",
    "raw.githubusercontent.com/nvm-sh/",
    "get.docker.com",
    "deno.land",
    "bun.sh",
    "get.pnpm.io",
    "install.python-poetry.org",
    "ollama.com",
    "claude.ai",
    "cli.github.com",
    "get.sdkman.io",
    "starship.rs",
    "pyenv.run",
    "fly.io",
    "get.helm.sh",
    "npmjs.org",
    "nodesource.com",
    "sdk.cloud.google.com",
    "awscli.amazonaws.com",
    "foundry.paradigm.xyz",
    "tailscale.com",
    "get.k3s.io",
    "install.determinate.systems",
    "nixos.org",
    "mise.run",
)


def _hosts(text: str) -> list[str]:
    found = []
    for match in _URL.finditer(text):
        found.append((match.group(1) + (match.group(2) or "")).lower())
    return found


def _download_severity(text: str) -> tuple[Severity, str]:
    urls = _hosts(text)
    if not urls:
        return "high", "from an address the text does not show"
    host = urlsplit("https://" + urls[0]).hostname or urls[0]
    if all(
        any(
            url.startswith(known) or url.split("/")[0].endswith("." + known.split("/")[0])
            for known in _KNOWN_INSTALLERS
        )
        for url in urls
    ):
        return "medium", f"from {host}, the official installer of a well-known tool"
    return "critical", f"from {host}"


#: Words one of which each group of patterns needs (its cheap first look).
_DOWNLOAD_WORDS = ("curl", "wget", "fetch", "iwr", "irm", "invoke-", "iex", "exec", "eval")
_DECODE_WORDS = (
    "base64",
    "decode",
    "decompress",
    "marshal",
    "fromhex",
    "unhexlify",
    "atob",
    "rot13",
    "rot_13",
    "powershell",
    "exec",
    "eval",
)
_SHELL_WORDS = ("/dev/tcp", "/dev/udp", "nc ", "ncat", "netcat", "socat", "mkfifo", "tcpclient")
_PRIVILEGE_WORDS = ("nopasswd", "/etc/", "chmod", "setcap", "usermod", "sudo")


def execution(located: Located) -> Iterator[Hit]:
    if located.mentions(_DOWNLOAD_WORDS):
        yield from _download_execute(located)
    if located.mentions(_DECODE_WORDS):
        yield from _decode_execute(located)
    if located.mentions(_SHELL_WORDS):
        yield from _reverse_shell(located)
    if located.mentions(("dup2", "pty.spawn")):
        yield from _reverse_shell_python(located)
    if located.mentions(_PRIVILEGE_WORDS):
        yield from _privilege(located)
    if located.mentions(("base64", "b64")):
        yield from _encoded_payloads(located)


def _download_execute(located: Located) -> Iterator[Hit]:
    for match in located.scan(_DOWNLOAD_EXECUTE, _DOWNLOAD_WORDS):
        severity, where = _download_severity(match.group())
        severity, shown = located.weigh(match.start(), severity)
        yield Hit.at(
            match, "download-execute", severity, f"downloads code {where} and runs it unseen{shown}"
        )
    for match in located.scan(_DOWNLOAD_RUN, ("curl", "wget")):
        severity, where = _download_severity(match.group())
        severity = "high" if severity == "critical" else severity
        severity, shown = located.weigh(match.start(), severity)
        yield Hit.at(
            match,
            "download-execute",
            severity,
            f"downloads a program {where}, makes it executable and runs it{shown}",
        )


_DECODE = (
    r"b64decode|b32decode|b16decode|a85decode|b85decode|decodebytes|decodestring|decompress"
    r"|unhexlify|fromhex|marshal\.loads|codecs\.decode|rot_?13|atob|FromBase64String"
    r"|Buffer\.from\([^)\n]*base64"
)
_DECODE_EXECUTE = re.compile(
    r"\bbase64\s+(?:-\w+\s+)*(?:-d|--decode|-D)\b[^\n]*\|\s*(?:" + _SHELL + r")"
    r"|\b(?:eval|(?:ba|z)?sh\s+-c)\s+[\"']?\$\([^\n]*(?:base64\s+(?:-\w+\s+)*(?:-d|--decode|-D)|xxd\s+-r|openssl\s+(?:enc\s+)?(?:-\w+\s+)*-d|gunzip|zcat|rev\b)"
    r"|\b(?:exec|eval|compile|Function|execfile)\s*\([^\n]{0,400}?(?:" + _DECODE + r")"
    r"|\bnew\s+Function\s*\([^\n]{0,200}?(?:" + _DECODE + r")"
    r"|(?:FromBase64String|\[Convert\])[^\n]*\|\s*(?:iex|Invoke-Expression)"
    r"|\b(?:iex|Invoke-Expression)\b[^\n]*FromBase64String"
    r"|\bpowershell(?:\.exe)?\b[^\n]*\s-(?:e|ec|enc|encodedcommand)\s+[A-Za-z0-9+/=]{16,}",
    re.IGNORECASE,
)
_DECODED_NAME = re.compile(
    r"^\s*(\w+)\s*=\s*[^\n]*(?:" + _DECODE + r")", re.MULTILINE | re.IGNORECASE
)


def _decode_execute(located: Located) -> Iterator[Hit]:
    text = located.text
    for match in located.scan(_DECODE_EXECUTE, _DECODE_WORDS):
        severity, shown = located.weigh(match.start(), "critical")
        yield Hit.at(
            match,
            "decode-execute",
            severity,
            f"decodes data and runs it as code, hidden from review{shown}",
        )
    if located.source.kind != "code":
        return
    names = {match.group(1) for match in _DECODED_NAME.finditer(text)}
    if not names:
        return
    runs = re.compile(
        r"\b(?:exec|eval|compile|Function)\s*\(\s*(?:"
        + "|".join(map(re.escape, sorted(names)))
        + r")\b(?:\.decode\(\))?"
    )
    for match in runs.finditer(text):
        yield Hit.at(
            match,
            "decode-execute",
            "critical",
            "runs as code what an earlier line decoded, hidden from review",
        )


_REVERSE_SHELL = re.compile(
    r"/dev/(?:tcp|udp)/[^\s/]+/\d+"
    r"|\b(?:nc|ncat|netcat)\b[^\n|]*\s-(?:e|c)\s*(?:/bin/)?(?:ba|z)?sh\b"
    r"|\bncat\b[^\n]*--(?:exec|sh-exec|lua-exec)"
    r"|\bsocat\b[^\n]*\b(?:exec|system):"
    r"|\bmkfifo\b[^\n]*\|\s*(?:/bin/)?(?:ba)?sh\b[^\n]*\b(?:nc|ncat|netcat|openssl\s+s_client)\b"
    r"|System\.Net\.Sockets\.TCPClient\b[^\n]*",
    re.IGNORECASE,
)
_DUP2 = re.compile(
    r"\bos\.dup2\(\s*\w+\.fileno\(\)\s*,\s*[012]\s*\)|\bpty\.spawn\(\s*[\"'](?:/bin/)?(?:ba|z)?sh"
)


def _reverse_shell_python(located: Located) -> Iterator[Hit]:
    text = located.text
    if "socket" not in text:
        return
    for match in _DUP2.finditer(text):
        yield Hit.at(
            match,
            "reverse-shell",
            "critical",
            "hands a network socket to a shell (stdin and stdout duplicated onto it)",
        )
        return


_PRIVILEGE = (
    (
        re.compile(r"\bNOPASSWD\b"),
        "critical",
        "grants password-less root (a NOPASSWD sudoers rule)",
    ),
    (
        re.compile(
            r"(?:>>?|\btee\s+(?:-a\s+)?|\bcp\s+\S+\s+|open\(\s*[\"'])\s*/etc/(?:sudoers(?:\.d/\S*)?|passwd|shadow|group)\b"
        ),
        "critical",
        "writes the system's account or sudo files",
    ),
    (
        # The shell's chmod (u+s, g+s, 4755) and Python's os.chmod (S_ISUID, 0o4755).
        re.compile(
            r"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s[rwx]*|[2467][0-7]{3})\s"
            r"|\bos\.chmod\([^)\n]*(?:S_ISUID|S_ISGID|0o[2467][0-7]{3})"
        ),
        "high",
        "sets the setuid or setgid bit: a program that runs as its owner",
    ),
    (
        re.compile(r"\bsetcap\s+[^\n]*cap_(?:setuid|sys_admin|dac_override)"),
        "high",
        "gives a program root capabilities",
    ),
    (
        re.compile(r"\busermod\s+(?:-\w+\s+)*-a?G\s+(?:sudo|wheel|root|admin|docker)\b"),
        "high",
        "adds a user to an administrators' group",
    ),
    (re.compile(r"\becho\s+[^\n|]*\|\s*sudo\s+-S\b"), "high", "pipes a password into sudo"),
)


def _privilege(located: Located) -> Iterator[Hit]:
    for pattern, severity, message in _PRIVILEGE:
        for match in located.scan(pattern, _PRIVILEGE_WORDS):
            weighed, shown = located.weigh(match.start(), severity)  # type: ignore[arg-type]
            yield Hit.at(match, "privilege-escalation", weighed, message + shown)


def _reverse_shell(located: Located) -> Iterator[Hit]:
    for match in located.scan(_REVERSE_SHELL, _SHELL_WORDS):
        weighed, shown = located.weigh(match.start(), "critical")
        yield Hit.at(match, "reverse-shell", weighed, "opens a shell for a remote host" + shown)


_BASE64_LITERAL = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{32,}={0,2}(?![A-Za-z0-9+/=])")
#: The patterns looked for inside a decoded literal, with their rule and what they mean.
_DECODED_PATTERNS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (_DOWNLOAD_EXECUTE, "download-execute", "downloads code and runs it"),
    (_REVERSE_SHELL, "reverse-shell", "opens a shell for a remote host"),
)


def _encoded_payloads(located: Located) -> Iterator[Hit]:
    """Base64 literals whose decoded text downloads and runs code or opens a reverse shell:
    hidden from review whatever runs them (a data URI of an image decodes to bytes, not
    text, and is passed over)."""
    import base64
    import binascii

    for match in _BASE64_LITERAL.finditer(located.text):
        literal = match.group()
        try:
            decoded = base64.b64decode(literal + "=" * (-len(literal) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if not decoded.isprintable() and not all(c.isprintable() or c in "\n\t\r" for c in decoded):
            continue
        for pattern, rule, meaning in _DECODED_PATTERNS:
            found = pattern.search(decoded)
            if found:
                yield Hit.at(
                    match,
                    rule,
                    "critical",
                    f"a base64 literal hides code that {meaning}: it decodes to"
                    f" {found.group()[:120]!r}",
                )
                break
