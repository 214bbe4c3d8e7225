"""Folder names of a workspace and the confinement of paths (``cwd``, inputs) to it."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..excerpt import excerpt
from .errors import WorkspacePathError

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_VAR_PREFIX = re.compile(
    r"^\$(\{)?(OUTPUT_DIR|WORK_DIR|SKILLS_DIR|WORKSPACE_DIR|RUN_DIR)(?(1)\})(?=/|$)"
)


def workspace_dir_name(session_id: str, time_ns: int) -> str:
    """``ws_<session with [^a-zA-Z0-9_-] replaced by _>_<time_ns>``, as the reference names it."""
    return f"ws_{_UNSAFE.sub('_', session_id)}_{time_ns}"


@dataclass(frozen=True)
class Layout:
    """The folders of one workspace (host paths)."""

    root: Path

    @property
    def metadata(self) -> Path:
        return self.root / "metadata.json"

    @property
    def skills(self) -> Path:
        return self.root / "skills"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def inputs(self) -> Path:
        return self.root / "work" / "inputs"

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def create(self) -> None:
        for folder in (self.skills, self.work, self.inputs, self.out, self.runs, self.home):
            folder.mkdir(parents=True, exist_ok=True)

    def variables(self, run_dir: Path | None = None) -> dict[str, Path]:
        variables = {
            "WORKSPACE_DIR": self.root,
            "SKILLS_DIR": self.skills,
            "WORK_DIR": self.work,
            "OUTPUT_DIR": self.out,
        }
        if run_dir is not None:
            variables["RUN_DIR"] = run_dir
        return variables

    def expand(self, text: str, run_dir: Path | None = None) -> str:
        """Rewrite a leading ``$OUTPUT_DIR`` / ``${WORK_DIR}`` / ... to its folder."""
        match = _VAR_PREFIX.match(text)
        if not match:
            return text
        folder = self.variables(run_dir).get(match.group(2))
        return text if folder is None else str(folder) + text[match.end() :]

    def confine(
        self,
        text: str,
        base: Path,
        what: str,
        run_dir: Path | None = None,
        sources: Sequence[Path] = (),
    ) -> Path:
        """``text`` (relative to ``base``, absolute or ``$VAR``-prefixed) as a path inside the root.

        Raises :class:`WorkspacePathError` when it would leave the workspace,
        lexically (``..``, an absolute host path) or through a symlink
        (except into one of ``sources``, the real folders of link-staged skills).
        """
        expanded = self.expand(text.strip(), run_dir)
        candidate = Path(os.path.normpath(base / expanded))
        real_root = self.root.resolve()
        lexical_ok = candidate == self.root or candidate.is_relative_to(self.root)
        real = candidate.resolve()
        real_ok = any(real.is_relative_to(folder) for folder in (real_root, *sources))
        if not (lexical_ok and real_ok):
            raise WorkspacePathError(
                f"{what} {excerpt(text)} resolves to {excerpt(str(real))}, outside the"
                " workspace"
                f" {str(self.root)!r};"
                " use a path relative to the skill folder or one starting with $WORK_DIR,"
                " $OUTPUT_DIR or $SKILLS_DIR"
            )
        return candidate
