"""The bait of a detonation run: a fake HOME of credentials and token variables, each value a
canary unique to the run, and the encodings under which a canary is still recognised."""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass, field

#: Where the fake HOME is inside the runtime.
HOME = "/home/auditor"
#: Token variables a credential stealer reads; each gets a canary.
TOKEN_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "NPM_TOKEN",
)


def _canary(kind: str) -> str:
    """A value unique to the run, shaped like the secret it stands for."""
    return f"canary{kind}{secrets.token_hex(12)}"


@dataclass(frozen=True)
class Bait:
    """The honeytoken files (relative to HOME) and variables of one run."""

    files: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    #: Each canary value and where it was planted (``~/.aws/credentials``, ``$GH_TOKEN``).
    canaries: dict[str, str] = field(default_factory=dict)

    @classmethod
    def fresh(cls) -> Bait:
        ssh, rsa = _canary("ssh"), _canary("rsa")
        aws_id, aws_secret = _canary("akid"), _canary("aws")
        netrc, git, gh = _canary("netrc"), _canary("git"), _canary("gh")
        files = {
            ".ssh/id_ed25519": (
                "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                f"{base64.b64encode(ssh.encode()).decode()}\n{ssh}\n"
                "-----END OPENSSH PRIVATE KEY-----\n"
            ),
            ".ssh/id_rsa": (
                "-----BEGIN RSA PRIVATE KEY-----\n"
                f"{base64.b64encode(rsa.encode()).decode()}\n{rsa}\n"
                "-----END RSA PRIVATE KEY-----\n"
            ),
            ".aws/credentials": (
                f"[default]\naws_access_key_id = {aws_id}\naws_secret_access_key = {aws_secret}\n"
            ),
            ".netrc": f"machine api.example login auditor password {netrc}\n",
            ".git-credentials": f"https://auditor:{git}@git.example\n",
            ".config/gh/hosts.yml": f"github.com:\n    oauth_token: {gh}\n    user: auditor\n",
        }
        variables = {name: _canary(name.lower().replace("_", "")) for name in TOKEN_VARIABLES}
        planted = {
            canary: f"~/{path}"
            for path, content in files.items()
            for canary in (ssh, rsa, aws_id, aws_secret, netrc, git, gh)
            if canary in content
        }
        planted.update({value: f"${name}" for name, value in variables.items()})
        return cls(files, variables, planted)

    def variants(self) -> dict[str, str]:
        """Every text under which a canary is recognised (raw, hex, base64 at the three
        alignments, URL-safe base64), mapped to the canary."""
        found: dict[str, str] = {}
        for canary in self.canaries:
            raw = canary.encode()
            found[canary] = canary
            found[raw.hex()] = canary
            for shift in range(3):
                for encode in (base64.b64encode, base64.urlsafe_b64encode):
                    encoded = encode(b"\0" * shift + raw).decode()
                    start = -(-shift // 3) * 4  # the first group holding only canary bytes
                    end = ((shift + len(raw)) // 3) * 4
                    found[encoded[start:end]] = canary
        return found
