"""The outputs code-scanning services read, shared by ``validate`` and ``audit``: SARIF 2.1.0
(GitHub code scanning) and GitHub Actions workflow annotations, and the JSON text of a report
(valid UTF-8 whatever the folder names: see :func:`~pytest_agent_skills.filenames.printable`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from .filenames import printable

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "agent-skills"


def json_text(document: Any) -> str:
    """``document`` as indented JSON, every string in it :func:`printable` (valid UTF-8)."""
    import json  # not loaded for the text report, the common one

    return json.dumps(_printable_data(document), indent=2, ensure_ascii=False) + "\n"


def _printable_data(data: Any) -> Any:
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {key: _printable_data(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_printable_data(item) for item in data]
    return data


def artifact_uri(path: Path, base: Path) -> dict[str, str]:
    """SARIF's artifact location of ``path``: relative to ``base`` (``%SRCROOT%``) when under
    it, else an absolute ``file:`` URI."""
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(base)
    except ValueError:
        return {"uri": absolute.as_uri()}
    # Percent-encoded from the bytes, as as_uri() encodes absolute paths.
    return {"uri": quote(os.fsencode(relative.as_posix())), "uriBaseId": "%SRCROOT%"}


def sarif_location(path: Path, line: int | None, base: Path) -> dict[str, Any]:
    """A result's ``locations`` entry: the file, and its line when known."""
    location: dict[str, Any] = {"artifactLocation": artifact_uri(path, base)}
    if line:
        location["region"] = {"startLine": line}
    return {"physicalLocation": location}


def sarif_log(
    rules: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]], base: Path
) -> str:
    """The SARIF 2.1.0 log of one run of ``agent-skills`` (``base``: ``%SRCROOT%``)."""
    from . import __version__  # read when a log is written, not when this module loads

    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": TOOL_NAME, "version": __version__, "rules": list(rules)}
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
                "results": list(results),
            }
        ],
    }
    return json_text(document)


def absolute_base(base: Path | None) -> Path:
    """The folder report paths are relative to: ``base``, else the current folder."""
    return Path(os.path.abspath(base or Path.cwd()))


def _workflow_escape(text: str, *, property_value: bool = False) -> str:
    """GitHub workflow-command escaping (``%``, CR, LF; also ``:`` and ``,`` in properties)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


class Annotation(NamedTuple):
    """One GitHub workflow annotation (``::error file=...,line=...,title=...::message``)."""

    level: str
    path: Path
    line: int | None
    title: str
    message: str

    def command(self, base: Path) -> str:
        absolute = Path(os.path.abspath(self.path))
        shown = absolute.relative_to(base) if absolute.is_relative_to(base) else absolute
        properties = [f"file={_workflow_escape(shown.as_posix(), property_value=True)}"]
        if self.line:
            properties.append(f"line={self.line}")
        properties.append(f"title={_workflow_escape(self.title, property_value=True)}")
        return f"::{self.level} {','.join(properties)}::{_workflow_escape(self.message)}"
