"""Secrets never shown: URLs masked, secret values replaced, wherever text leaves the process.

Every place that shows a URL (errors, the report header, cassettes, the cache marker)
passes it through :func:`mask_url`; every message shown to the user (failures, trajectory
reports, errors) and every cassette written passes through a :class:`Redactor`.

A URL is masked in two places:

* its userinfo (``user:password@`` or a lone token ``ghp_x@``) becomes ``***@``;
* the value of each query parameter whose name looks secret becomes ``***``.  A name looks
  secret when, lowercased with ``-`` and ``_`` removed, it is one of
  :data:`SECRET_QUERY_NAMES` or ends with one of :data:`SECRET_QUERY_SUFFIXES`
  (``access_token``, ``api-key``, ``X-Amz-Signature``, ``sig``, ``key``...).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote_plus

MASK = "***"
REDACTED = "<redacted>"
#: Query parameter names (lowercase, without ``-`` and ``_``) whose values are secrets.
SECRET_QUERY_NAMES = frozenset({"sig", "auth", "pass", "pwd", "jwt", "credentials"})
#: Name endings that make a query parameter secret (``api_key``, ``access_token``,
#: ``X-Amz-Signature``).
SECRET_QUERY_SUFFIXES = ("key", "token", "secret", "password", "passwd", "signature", "credential")
#: Header names whose values are secrets (lowercase).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "api-key",
        "x-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "proxy-authorization",
    }
)
#: A URL inside free text: a scheme, ``://`` and everything up to a space or a quote.
_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")


def is_secret_query_name(name: str) -> bool:
    normal = name.lower().replace("-", "").replace("_", "")
    return normal in SECRET_QUERY_NAMES or normal.endswith(SECRET_QUERY_SUFFIXES)


def mask_url(url: str) -> str:
    """``url`` with its userinfo and the values of its secret query parameters masked."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    authority, path = _split_authority(rest)
    if "@" in authority:
        authority = f"{MASK}@{authority.rpartition('@')[2]}"
    path, hash_mark, fragment = path.partition("#")
    path, question, query = path.partition("?")
    if question:
        query = "&".join(_mask_parameter(part) for part in query.split("&"))
    return f"{scheme}{separator}{authority}{path}{question}{query}{hash_mark}{fragment}"


def _split_authority(rest: str) -> tuple[str, str]:
    """The authority of ``rest`` (what follows ``scheme://``) and the rest of the URL."""
    end = len(rest)
    for delimiter in "/?#":
        index = rest.find(delimiter)
        if index >= 0:
            end = min(end, index)
    # A password may hold '/', '?' or '#': the authority then runs to the last '@' before them.
    at = rest.rfind("@")
    if at >= end:
        later = [rest.find(d, at) for d in "/?#"]
        end = min((i for i in later if i >= 0), default=len(rest))
    return rest[:end], rest[end:]


def _mask_parameter(part: str) -> str:
    name, equals, _value = part.partition("=")
    return f"{name}={MASK}" if equals and is_secret_query_name(unquote_plus(name)) else part


def mask_urls(text: str) -> str:
    """``text`` with every URL in it masked (error messages of HTTP libraries quote URLs)."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda match: mask_url(match.group(0)), text)


def userinfo(url: str) -> str:
    """The userinfo of ``url`` (``user:password`` before ``@host``), "" when it has none."""
    _scheme, separator, rest = url.partition("://")
    return _split_authority(rest)[0].rpartition("@")[0] if separator else ""


def url_secrets(url: str) -> list[str]:
    """The secret values written in ``url`` (its userinfo, its secret query values), as
    written and percent-decoded, longest first."""
    _scheme, separator, rest = url.partition("://")
    if not separator:
        return []
    credentials = userinfo(url)
    # user:password@ - the password is the secret; a lone token@ is one itself.
    found = [credentials.partition(":")[2] if ":" in credentials else credentials]
    query = _split_authority(rest)[1].partition("#")[0].partition("?")[2]
    for part in query.split("&"):
        name, equals, value = part.partition("=")
        if equals and is_secret_query_name(unquote_plus(name)):
            found.append(value)
    found += [unquote_plus(value) for value in found]
    return sorted({value for value in found if value}, key=lambda value: (-len(value), value))


class Redactor:
    """Replaces secret headers and every occurrence of secret values.

    The secrets are the values of the environment variables named in ``secret_env``
    (shown as ``<redacted:NAME>``) and ``extra_values`` (shown as ``<redacted>``), whatever
    their length.  :meth:`redact` cleans data written to a file (a cassette);
    :meth:`redact_text` cleans a message shown to the user, its URLs masked as well.
    """

    def __init__(
        self,
        secret_env: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
        extra_values: Iterable[str] = (),
    ) -> None:
        environ = os.environ if environ is None else environ
        names = dict.fromkeys(secret_env)  # in order, once each
        pairs = [(environ.get(name, ""), f"<redacted:{name}>") for name in names]
        pairs += [(value, REDACTED) for value in extra_values]
        #: (secret value, its replacement), longest first so that a secret containing
        #: another is replaced whole.
        self.secrets = sorted((pair for pair in pairs if pair[0]), key=lambda p: -len(p[0]))

    def redact(self, data: Any) -> Any:
        """``data`` (JSON-like) with secret header values and secret values replaced."""
        if isinstance(data, dict):
            return {
                key: (
                    REDACTED
                    if key.lower() in SECRET_HEADERS and isinstance(value, str)
                    else self.redact(value)
                )
                for key, value in data.items()
            }
        if isinstance(data, list):
            return [self.redact(item) for item in data]
        if isinstance(data, str):
            return self._replace_values(data)
        return data

    def redact_text(self, text: str) -> str:
        # URLs first: a secret query value replaced first would leave its URL "key=***<redacted>".
        return self._replace_values(mask_urls(text))

    def _replace_values(self, text: str) -> str:
        for value, replacement in self.secrets:
            text = text.replace(value, replacement)
        return text
