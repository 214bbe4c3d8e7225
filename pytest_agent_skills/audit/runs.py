"""What a detonation run executes for one skill: what an agent following the skill would run.

- every script under the skill, with no arguments (by its interpreter, from its suffix);
- every shell block of SKILL.md and of the docs SKILL.md links;
- with recorded conversations (``--cassettes DIR``), every ``skill_run`` command a model
  ran with that skill.

Each command runs with the skill folder as its working directory, as ``skill_run`` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..filenames import BASE_DIR_PLACEHOLDER, SKILL_FILE
from ..skill import Skill

#: Fence info strings of a block a shell runs (``console`` blocks hold ``$ `` prompts).
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session"})
#: How a script is run with no arguments, by suffix; other suffixes run as executables.
INTERPRETERS = {
    ".py": "python3",
    ".pyw": "python3",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".rb": "ruby",
    ".pl": "perl",
    ".php": "php",
    ".lua": "lua",
    ".r": "Rscript",
    ".awk": "awk -f",
    ".tcl": "tclsh",
    ".jl": "julia",
}
#: Cassettes larger than this are not read for commands (listed as not analysed).
MAX_CASSETTE_BYTES = 16 * 1024 * 1024


class PlannedRun(NamedTuple):
    """One command of a detonation run and where it comes from."""

    command: str
    #: The file it comes from: relative to the skill folder, or a cassette's path.
    file: str
    #: The line of a shell block; None for a script or a recorded command.
    line: int | None
    #: ``script``, ``shell block`` or ``recorded command``.
    origin: str


def script_command(relative: str) -> str:
    suffix = Path(relative).suffix.lower()
    interpreter = INTERPRETERS.get(suffix)
    quoted = "'" + relative.replace("'", "'\\''") + "'"
    return f"{interpreter} {quoted}" if interpreter else f"./{quoted}"


def shell_blocks(text: str) -> Iterator[tuple[int, str]]:
    """The shell blocks of a Markdown text: (1-based line of the fence, commands)."""
    from markdown_it import MarkdownIt

    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.map is None:
            continue
        language = token.info.strip().split(maxsplit=1)[0].lower() if token.info.strip() else ""
        if language not in SHELL_LANGUAGES:
            continue
        content = token.content
        if language in ("console", "shell-session"):
            # Only the prompted lines are commands; the others are their output.
            content = "\n".join(
                line.lstrip()[2:] for line in content.splitlines() if line.lstrip().startswith("$ ")
            )
        if content.strip():
            yield token.map[0] + 1, content


def linked_docs(skill: Skill) -> list[str]:
    """The docs of the skill that SKILL.md refers to."""
    folders = frozenset(doc.split("/", 1)[0] for doc in skill.docs if "/" in doc)
    targets = {
        reference.target.split("#", 1)[0] for reference in skill.markdown.references(folders)
    }
    return [doc for doc in skill.docs if doc in targets and doc.endswith(".md")]


def planned_runs(skill: Skill, inside: str) -> list[PlannedRun]:
    """The scripts and the shell blocks of ``skill`` (whose folder is ``inside`` in the run)."""
    runs = [PlannedRun(script_command(path), path, None, "script") for path in skill.scripts]
    texts = [(SKILL_FILE, skill.body, skill.body_line - 1)]
    for doc in linked_docs(skill):
        try:
            texts.append((doc, skill.read_text(doc), 0))
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # the static half lists a doc it cannot read
    for file, text, first in texts:
        for line, block in shell_blocks(text):
            command = block.replace(BASE_DIR_PLACEHOLDER, inside).replace("{baseDir}", inside)
            runs.append(PlannedRun(command, file, first + line, "shell block"))
    return runs


def recorded_runs(cassettes: Path, skill_name: str) -> tuple[list[PlannedRun], list[str]]:
    """The ``skill_run`` commands for ``skill_name`` in every cassette under ``cassettes``,
    each once; and the cassettes that could not be read (with the reason)."""
    runs: list[PlannedRun] = []
    unread: list[str] = []
    seen: set[str] = set()
    for path in sorted(cassettes.rglob("*.json")):
        if path.name.endswith((".grader.json", ".run.json")) or not path.is_file():
            continue
        try:
            if path.stat().st_size > MAX_CASSETTE_BYTES:
                unread.append(f"{path}: larger than {MAX_CASSETTE_BYTES} bytes")
                continue
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as error:
            unread.append(f"{path}: not a readable JSON cassette ({error.__class__.__name__})")
            continue
        for command in _skill_run_commands(document, skill_name):
            if command not in seen:
                seen.add(command)
                runs.append(PlannedRun(command, str(path), None, "recorded command"))
    return runs, unread


def _skill_run_commands(document: Any, skill_name: str) -> Iterator[str]:
    interactions = document.get("interactions") if isinstance(document, dict) else None
    for interaction in interactions if isinstance(interactions, list) else []:
        try:
            calls = interaction["response"]["body"]["choices"][0]["message"]["tool_calls"]
        except (KeyError, IndexError, TypeError):
            continue
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or function.get("name") != "skill_run":
                continue
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                continue
            if (
                isinstance(arguments, dict)
                and arguments.get("skill") == skill_name
                and isinstance(arguments.get("command"), str)
            ):
                yield arguments["command"]
