"""The environment a skill command sees: a small allowlist of host variables, the workspace
variables, ``HOME`` inside the workspace, the caller's explicit ``env``, and the tag that marks
the command's processes (:data:`~.process.TAG_VARIABLE`, which ``env`` cannot set).

Nothing else from the host reaches the command: an ``OPENAI_API_KEY`` (or any
other secret) in the test process stays there unless the caller passes it in
``env`` on purpose.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..excerpt import excerpt
from .errors import WorkspaceError
from .process import TAG_VARIABLE

#: Host variables passed through when set (locale, time zone, terminal type).
#: ``PATH`` is passed for non-login use; ``bash -l`` resets it from /etc/profile on Debian.
HOST_ALLOWLIST = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def build_environment(
    *,
    workspace_vars: Mapping[str, str],
    home: str,
    extra: Mapping[str, str] | None,
    tag: str,
    host: Mapping[str, str] | None = None,
) -> dict[str, str]:
    host = os.environ if host is None else host
    environment = {name: host[name] for name in HOST_ALLOWLIST if name in host}
    environment.setdefault("PATH", FALLBACK_PATH)
    environment["HOME"] = home
    environment.update(workspace_vars)
    for key, value in (extra or {}).items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise WorkspaceError(f"invalid environment variable name {excerpt(key)} in env")
        if not isinstance(value, str) or "\0" in value:
            raise WorkspaceError(
                f"environment variable {excerpt(key)} must be a string without NUL bytes"
            )
        if key == TAG_VARIABLE:
            raise WorkspaceError(
                f"env cannot set {TAG_VARIABLE}: the workspace sets it to find every process of"
                " the command"
            )
        environment[key] = value
    environment[TAG_VARIABLE] = tag
    return environment
