"""The audit rules: each id with its family, its usual severity and its documentation.

A rule id is API (reports, ``--select``/``--ignore``, suppressions, ``agent-skills rule
ID``); ``docs/audit.md`` carries this table (a test keeps the two in step).  ``severity`` is
the rule's severity where its pattern shows intent (a script, a shell block an agent would
run); the same text where it only documents or quotes (prose for the user, a code block of
text, a data file) is reported lower, as each rule's documentation says.
"""

from __future__ import annotations

from typing import NamedTuple

from .severity import Severity


class AuditRule(NamedTuple):
    id: str
    family: str
    severity: Severity
    summary: str
    #: What it finds, where it is weighed lower, and why it matters.
    finds: str
    fix: str


AUDIT_RULES: dict[str, AuditRule] = {}


def _rule(
    rule_id: str, family: str, severity: Severity, summary: str, finds: str, fix: str
) -> None:
    AUDIT_RULES[rule_id] = AuditRule(rule_id, family, severity, summary, finds, fix)


_rule(
    "hidden-unicode-tags",
    "invisible-text",
    "critical",
    "text written in invisible Unicode Tag characters",
    "Characters of the Tag block (U+E0000 to U+E007F) outside an emoji flag: invisible in"
    " every editor and review tool, read by the model as text. The evidence shows them"
    " escaped and the message decodes them.",
    "Remove the characters; a flag emoji keeps its tags.",
)
_rule(
    "zero-width-run",
    "invisible-text",
    "high",
    "a run of zero-width characters (hidden data or text)",
    "Three or more zero-width characters in a row (U+200B, U+200C, U+200D, U+2060 to U+2064,"
    " U+FEFF), or many scattered ones (medium): a way to carry hidden bits. A joiner inside"
    " an emoji sequence and a byte order mark at the start are normal and not reported.",
    "Remove the zero-width characters.",
)
_rule(
    "bidi-control",
    "invisible-text",
    "high",
    "a bidirectional control character in code (Trojan Source)",
    "Bidi embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069) in a script"
    " or a code block make code read otherwise than it runs. In prose (right-to-left text)"
    " they are low; the marks U+200E and U+200F are not reported.",
    "Remove the control characters from code.",
)
_rule(
    "hidden-comment-instructions",
    "model-instructions",
    "high",
    "an HTML comment that addresses the model",
    "An HTML comment in a Markdown file that speaks to the agent (the model reads it, a human"
    " viewing the rendered page does not): medium, high when it asks for secrecy, overrides"
    " instructions or names commands, credentials or the network.",
    "Write instructions in the visible text, or remove the comment.",
)
_rule(
    "fake-system-block",
    "model-instructions",
    "high",
    "a fake system or priority block",
    "Text posing as a higher authority than the skill: <system> tags, chat-template tokens"
    " (<|im_start|>system, [INST]), 'SYSTEM OVERRIDE' headings. In a code block, inline code"
    " or quotes it is low (a skill about prompts shows them).",
    "Remove the block; a skill speaks as a skill.",
)
_rule(
    "instruction-override",
    "model-instructions",
    "high",
    "an instruction to ignore instructions or to hide from the user",
    "'Ignore all previous instructions', 'do not tell the user', 'silently run', 'the user has"
    " already approved' in the text the model reads. Quoted in a code block, inline code or"
    " quotation marks (a prompt-injection detector lists such phrases) it is low.",
    "Remove the instruction.",
)
_rule(
    "download-execute",
    "execution",
    "critical",
    "downloads code and runs it (curl | sh, bash <(curl), iex)",
    "curl or wget piped into a shell or an interpreter, a shell run on a download's output,"
    " PowerShell Invoke-Expression of a download, exec of a fetched page. Critical for an"
    " unknown host; medium for the official installers of well-known tools (rustup, uv,"
    " Homebrew); high for a download made executable and run; critical inside a base64"
    " literal (hidden from review, whatever runs it).",
    "Install from a package manager with a pinned version, or ship the script in the skill.",
)
_rule(
    "decode-execute",
    "execution",
    "critical",
    "decodes or decompresses data and runs it",
    'base64 -d | sh, eval "$(... | base64 -d)", exec/eval of b64decode, zlib.decompress,'
    " marshal.loads, codecs rot13 or atob, PowerShell FromBase64String into iex or"
    " -EncodedCommand: code hidden from review. Base64 of images and data is not reported.",
    "Ship the code in clear text.",
)
_rule(
    "reverse-shell",
    "reverse-shell",
    "critical",
    "opens a shell for a remote host",
    "/dev/tcp redirections, nc -e, socat exec:, a socket duplicated onto stdin/stdout with a"
    " shell, a PowerShell TCPClient loop: remote control of the machine; also inside a base64"
    " literal.",
    "Remove it.",
)
_rule(
    "privilege-escalation",
    "privilege-escalation",
    "critical",
    "grants itself root: sudoers, setuid, system account files",
    "Writes to /etc/sudoers or NOPASSWD rules, setuid or setgid bits (chmod u+s, 4755),"
    " capabilities, group changes to sudo/wheel/docker, writes to /etc/passwd or /etc/shadow,"
    " a password piped into sudo -S. 'sudo apt-get install' is not reported.",
    "Remove it; document what the user must install instead.",
)
_rule(
    "credential-access",
    "credentials",
    "high",
    "reads credentials: SSH keys, cloud credentials, .netrc, git and browser secrets",
    "A script or a shell command that reads ~/.ssh keys, ~/.aws/credentials, gcloud or Azure"
    " credentials, .netrc, .git-credentials, the gh hosts file, docker or kube configs,"
    " package registry tokens, browser password stores or the keychain. In prose for the user"
    " it is low, in a Markdown code block medium.",
    "Let the tool that owns the credential use it (aws, gh, git); never read it directly.",
)
_rule(
    "credential-exfiltration",
    "credentials",
    "critical",
    "reads credentials or the whole environment and sends data over the network",
    "Credential access or a serialised environment (json.dumps(os.environ), printenv | curl)"
    " in the same file or command as outbound network code: critical. A secret environment"
    " variable sent to hosts that are not its service's (OPENAI_API_KEY to a host without"
    " 'openai' in its name): high. A key sent to its own API's host is not reported.",
    "Remove the sending; a skill never sends credentials anywhere but their own service.",
)
_rule(
    "exfil-endpoint",
    "network",
    "high",
    "sends to a data-collection service or a bare IP address",
    "URLs of request catchers and drop sites (webhook.site, requestbin, pipedream, ngrok,"
    " interactsh, Discord webhooks, Telegram bots, pastebin, transfer.sh) in code: high;"
    " in prose, or a URL naming a bare IP address: medium.",
    "Send only to the service the skill is for, by name.",
)
_rule(
    "persistence",
    "persistence",
    "high",
    "makes itself run again later: shell rc files, cron, services, git hooks, ssh keys",
    "Writes to ~/.bashrc, ~/.zshrc, ~/.profile, crontab, systemd or launchd units, Windows"
    " Run keys, git hooks; an ssh key added to authorized_keys (critical). A documented"
    " 'export NAME=...' or alias line for the user to add to a shell rc file is low, and"
    " 'crontab -e' in prose medium.",
    "Do the work when asked; let the user install what runs later.",
)
_rule(
    "memory-poisoning",
    "persistence",
    "high",
    "writes the agent's memory or instruction files (CLAUDE.md, AGENTS.md, agent settings)",
    "Writes to CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, copilot-instructions.md, agent"
    " settings (hooks) or the user's home agent folders (~/.claude, ~/.codex): instructions"
    " that outlive the skill. High in a script or for the home folders; a project's own"
    " AGENTS.md written from a Markdown step is low.",
    "Show the user what to add; never write an agent's memory from a skill.",
)
_rule(
    "description-claims-all",
    "triggering",
    "high",
    "a description that claims every request or demands to load first",
    "A description saying to use the skill for all tasks or every request, to always load it"
    " first or before any other skill: it hijacks the routing of every conversation to"
    " deliver its body.",
    "Say what the skill does and when to use it.",
)
_rule(
    "link-outside",
    "links",
    "medium",
    "a symbolic link that leads out of the skill folder",
    "A link to a file or folder outside the skill is not followed (nothing of it is read);"
    " high when it leads to a home folder's secrets (.ssh, .aws, .config) or /etc.",
    "Replace the link with a copy of what the skill needs.",
)


# The detonation run's rules (``--dynamic``, ``analysis: "dynamic"``: see :mod:`.observations`).
_rule(
    "dynamic-exfiltration",
    "dynamic",
    "critical",
    "a canary left the run in a connection's bytes",
    "A canary value of the run (a honeytoken's content or a token variable's) was sent in a"
    " connection or a name lookup the sink recorded: the skill sends secrets away.",
    "Remove the sending.",
)
_rule(
    "dynamic-honeytoken-read",
    "dynamic",
    "high",
    "a honeytoken of the fake HOME was read",
    "A command opened a fake credential (SSH key, cloud credentials, .netrc, git credentials,"
    " gh token file) seeded in the run's HOME.",
    "Let the tool that owns the credential use it; never read it from a skill.",
)
_rule(
    "dynamic-canary-output",
    "dynamic",
    "high",
    "a canary in the command's output or a file it wrote",
    "A canary value of the run appeared in the command's output or in a file it wrote: the"
    " secret is collected where the agent or a later command can pass it on.",
    "Do not read or print secrets.",
)
_rule(
    "dynamic-persistence",
    "dynamic",
    "high",
    "a write to a shell rc file, a HOME dotfile, an agent memory file or a system folder",
    "A write (done or refused) outside the workspace to where code or instructions outlive"
    " the run: ~/.bashrc and other dotfiles, CLAUDE.md, AGENTS.md, system folders.",
    "Write only in the workspace.",
)
_rule(
    "dynamic-process-left",
    "dynamic",
    "high",
    "a process still running when the command ended",
    "A process the command started outlived it: a daemon, a reverse shell, a miner.",
    "Wait for every process the skill starts.",
)
_rule(
    "dynamic-egress",
    "dynamic",
    "medium",
    "a connection attempt or a name lookup",
    "The command tried to reach the network (every route leads to the run's sink; nothing"
    " leaves the machine). Normal for a skill that calls an API; worth a look otherwise.",
    "Call only the service the skill is for, and say so in SKILL.md.",
)
_rule(
    "dynamic-temp-write",
    "dynamic",
    "low",
    "a file left in /tmp, /var/tmp, /run or a HOME cache folder",
    "A file written outside the workspace and left there: a payload staged for later, or"
    " untidiness.",
    "Write temporary files in the workspace, and remove them.",
)


def markdown_table() -> str:
    """The rule table of docs/audit.md: one row per rule (a test keeps the page in step)."""
    rows = [
        "| rule | family | severity | what it finds | how to fix |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in AUDIT_RULES.values():
        finds, fix = (text.replace("|", "\\|") for text in (rule.finds, rule.fix))
        rows.append(f"| `{rule.id}` | {rule.family} | {rule.severity} | {finds} | {fix} |")
    return "\n".join(rows) + "\n"
