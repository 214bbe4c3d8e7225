"""Rules on secrets and the network: credential files read, the environment or secrets sent
away, and data-collection endpoints."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from .context import Hit, Located
from .severity import Severity

_CREDENTIAL = re.compile(
    r"\.ssh/(?:id_[\w.-]+|identity)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
    r"|\.aws/credentials\b|\.config/gcloud\b|application_default_credentials\.json"
    r"|\.azure/(?:accessTokens|msal_token_cache|azureProfile)|(?<![\w-])\.netrc\b|\.git-credentials\b"
    r"|\.config/gh/hosts\.yml|\.docker/config\.json|\.kube/config\b|(?<![\w-])\.npmrc\b|\.pypirc\b"
    r"|\.gnupg/|/etc/shadow\b|Login\s+Data\b|logins\.json|key4\.db|Cookies(?:\.binarycookies)?[\"'/]"
    r"|\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)\b"
    r"|\bgit\s+credential\s+fill\b|\.config/(?:solana|hub)\b|\.ethereum/keystore|wallet\.dat\b",
)
_ENV_DUMP = re.compile(
    r"json\.dumps\(\s*(?:dict\()?\s*os\.environ|str\(\s*(?:dict\()?\s*os\.environ\s*\)|repr\(\s*os\.environ"
    r"|JSON\.stringify\(\s*process\.env\s*\)|\bprintenv\s*(?:\||>|$)|(?:^|[;&|]\s*)env\s*(?:\||>)"
    r"|Get-ChildItem\s+env:|\bdict\(\s*os\.environ\s*\)\s*[,)]|\{\s*\*\*os\.environ\s*\}\s*[,)]"
    r"|os\.environ\.(?:copy\(\)|items\(\))\s*[,)]",
    re.MULTILINE,
)
_NETWORK = re.compile(
    r"\brequests\.(?:post|put|get|patch|request)\(|\bhttpx\.|\burllib\.request\b|\burlopen\(|\bhttp\.client\b"
    r"|\bsocket\.(?:socket|create_connection)\b|\bfetch\(|\baxios\b|\bXMLHttpRequest\b|\bsmtplib\b|\bftplib\b"
    r"|\bparamiko\b|\b(?:curl|wget)\s|\b(?:nc|ncat|netcat)\s|\bInvoke-(?:WebRequest|RestMethod)\b|\bNet\.WebClient\b"
    r"|\bscp\s|\brsync\s[^\n]*:|\bhttps?\.request\(|\bdns\.resolver\b",
)
_SECRET_VARIABLE = re.compile(
    r"(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\(\s*|process\.env\.|process\.env\[\s*|\$env:|\$\{?)"
    r"[\"']?([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIALS?|PAT)\b)",
)
_URL = re.compile(r"https?://([A-Za-z0-9.-]+)")
#: Words of a secret's name that say nothing of whose it is.
_GENERIC = frozenset(
    {
        "api",
        "key",
        "token",
        "secret",
        "access",
        "password",
        "passwd",
        "auth",
        "client",
        "id",
        "private",
        "personal",
        "pat",
        "credentials",
        "credential",
        "app",
        "bot",
        "user",
        "service",
        "account",
        "session",
        "bearer",
        "oauth",
        "refresh",
        "default",
        "my",
    }
)
_VENDOR_HOSTS = {
    "gh": "github",
    "aws": "amazonaws",
    "gcp": "googleapis",
    "google": "googleapis",
    "hf": "huggingface",
    "az": "azure",
    "claude": "anthropic",
}
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")


_SECRET_WORDS = (
    ".ssh",
    "id_",
    ".aws",
    "gcloud",
    "credential",
    ".azure",
    "netrc",
    "gh/hosts",
    ".docker",
    ".kube",
    "npmrc",
    "pypirc",
    "gnupg",
    "shadow",
    "login data",
    "logins.json",
    "key4.db",
    "cookies",
    "security ",
    "solana",
    ".config/hub",
    "keystore",
    "wallet.dat",
    "environ",
    "getenv",
    "process.env",
    "$env:",
    "printenv",
    "env ",
    "env|",
    "get-childitem",
    "_token",
    "_key",
    "_secret",
    "password",
    "passwd",
    "_pat",
)


def secrets(located: Located) -> Iterator[Hit]:
    if not located.mentions(_SECRET_WORDS):
        return
    text = located.text
    network = [match.start() for match in _NETWORK.finditer(text)]
    kind = located.source.kind
    for match in located.scan(_CREDENTIAL, _SECRET_WORDS):
        region = located.region(match.start())
        sends = _sent_with(located, match.start(), network)
        if sends and region in ("code", "prose", "comment"):
            yield Hit.at(
                match,
                "credential-exfiltration",
                "critical",
                f"reads {match.group()!r} and sends data over the network (line"
                f" {located.line(sends[0])})",
            )
            continue
        severity: Severity = "high" if region in ("code", "comment") else "low"
        if kind == "markdown" and region == "code":
            severity = "medium"
        yield Hit.at(
            match,
            "credential-access",
            severity,
            f"reads {match.group()!r}, a credential store"
            + ("" if severity != "low" else " (mentioned for the user, not read)"),
        )
    if network:
        yield from _env_dumps(located, network)
        if kind == "code":
            yield from _foreign_secrets(located)


def _sent_with(located: Located, start: int, network: list[int]) -> list[int]:
    """The network calls (offsets) that send what is read at ``start``: any in a script, else
    those of the same fenced block or line."""
    if located.source.kind == "code":
        return network
    block = located.block(start)
    return [
        position
        for position in network
        if (block >= 0 and located.block(position) == block)
        or located.line(position) == located.line(start)
    ]


def _env_dumps(located: Located, network: list[int]) -> Iterator[Hit]:
    for match in _ENV_DUMP.finditer(located.text):
        if located.region(match.start()) in ("quote", "data"):
            continue
        if not _sent_with(located, match.start(), network):
            continue
        yield Hit.at(
            match,
            "credential-exfiltration",
            "critical",
            "serialises the whole environment (every token and key in it) where data is sent"
            f" over the network (line {located.line(network[0])})",
        )


def _foreign_secrets(located: Located) -> Iterator[Hit]:
    hosts = {
        host.lower()
        for host in _URL.findall(located.text)
        if not host.lower().startswith(_LOCAL_HOSTS) and "." in host
    }
    if not hosts:
        return
    for match in _SECRET_VARIABLE.finditer(located.text):
        name = match.group(1)
        words = [word for word in name.lower().split("_") if word and word not in _GENERIC]
        if not words:
            continue  # API_KEY: whose, the text does not say
        vendors = [_VENDOR_HOSTS.get(word, word) for word in words]
        if any(
            vendor in host or word in host
            for vendor, word in zip(vendors, words, strict=True)
            for host in hosts
        ):
            continue
        shown = ", ".join(sorted(hosts)[:3])
        yield Hit.at(
            match,
            "credential-exfiltration",
            "high",
            f"reads the secret {name} and sends requests to {shown}, not its own service's host",
        )


_COLLECTORS = re.compile(
    r"https?://(?:[\w-]+\.)*(?:webhook\.site|requestbin\.\w+|pipedream\.net|m\.pipedream\.net"
    r"|ngrok(?:-free)?\.(?:io|app|dev)|interact\.sh|oast\.(?:pro|live|site|online|fun|me)"
    r"|burpcollaborator\.net|canarytokens\.com|pastebin\.com|transfer\.sh|0x0\.st|file\.io"
    r"|hastebin\.com|ptpb\.pw|beeceptor\.com|hookbin\.com|requestcatcher\.com|[\w-]+\.onion)\b[^\s\"'`)]*"
    r"|https?://(?:discord(?:app)?\.com/api/webhooks|api\.telegram\.org/bot)[^\s\"'`)]*",
    re.IGNORECASE,
)
_BARE_IP = re.compile(r"https?://(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?(?:/[^\s\"'`)]*)?")


def endpoints(located: Located) -> Iterator[Hit]:
    text = located.text
    if "://" not in text:
        return
    for match in _COLLECTORS.finditer(text):
        region = located.region(match.start())
        severity: Severity = "high" if region in ("code", "comment") else "medium"
        host = urlsplit(match.group()).hostname or match.group()
        yield Hit.at(
            match,
            "exfil-endpoint",
            severity,
            f"sends to {host}, a service that collects whatever is posted to it",
        )
    for match in _BARE_IP.finditer(text):
        address = match.group(1)
        if address.startswith(("127.", "0.", "10.", "192.168.")) or address == "255.255.255.255":
            continue
        yield Hit.at(
            match,
            "exfil-endpoint",
            "medium",
            f"an address by bare IP ({address}): a server with no name to vet",
        )
