"""What one ``run`` returns: :class:`RunResult` and its :class:`OutputFile` entries.

The field names are those of the reference runtime's ``skill_run`` result, so
``to_dict()`` can be handed to a model unchanged; our extras (``warnings``,
the truncation flags and byte counts) come after them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

#: Default ``skill_run`` timeout in seconds (the reference tool's default).
DEFAULT_TIMEOUT_SECONDS = 300.0
#: The longest timeout a run may ask for (a larger number overflows the clock arithmetic).
MAX_TIMEOUT_SECONDS = 86_400
#: stdout and stderr are each kept up to this many bytes (the reference cuts at 16 KiB).
STREAM_CAP_BYTES = 16 * 1024
#: Each output file is inlined up to this many bytes (the reference's ``MAX_READ_SIZE_BYTES``).
INLINE_FILE_CAP_BYTES = 4 * 1024 * 1024
#: All inline output-file content of one run together stays under this many bytes.
INLINE_TOTAL_CAP_BYTES = 16 * 1024 * 1024
#: At most this many output files are reported per run (the reference ``outputs`` default).
MAX_OUTPUT_FILES = 100
#: ``save_as_artifacts`` saves at most this many bytes per run (the reference's
#: ``max_total_bytes``); a file that does not fit is not saved (a warning says so), never cut.
ARTIFACT_CAP_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class OutputFile:
    """One collected output file.

    ``content`` is the inline text (possibly cut at the inline cap, then
    ``truncated`` is true); it is empty for binary files, for files past the
    total cap, and when ``omit_inline_content`` was asked for.  ``path`` is
    the host path, for callers that want the bytes.
    """

    name: str
    content: str
    mime_type: str
    size_bytes: int
    truncated: bool
    path: Path
    is_text: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "content": self.content,
            "mime_type": self.mime_type,
            "size_bytes": self.size_bytes,
            "truncated": self.truncated,
            "ref": f"workspace://{self.name}",
        }

    def read_bytes(self) -> bytes:
        """The file's whole content (not capped: for files you know are small)."""
        return self.path.read_bytes()


@dataclass(frozen=True)
class ArtifactFile:
    name: str
    version: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunResult:
    """The outcome of one command run in a workspace."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    duration_ms: int
    output_files: tuple[OutputFile, ...] = ()
    artifact_files: tuple[ArtifactFile, ...] = ()
    warnings: tuple[str, ...] = ()
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    #: Files of the staged skill tree that the command changed (local runtime only can).
    modified_skill_files: tuple[str, ...] = ()
    run_dir: Path | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def output(self, name: str) -> OutputFile:
        for output in self.output_files:
            if output.name == name:
                return output
        known = ", ".join(output.name for output in self.output_files) or "(none)"
        raise KeyError(f"no output file {name!r} in this result; collected: {known}")

    def to_dict(self) -> dict[str, Any]:
        """The fields in their order as JSON values, all but ``run_dir``."""
        data = {item.name: getattr(self, item.name) for item in fields(self)}
        del data["run_dir"]
        data["output_files"] = [output.to_dict() for output in self.output_files]
        data["artifact_files"] = [artifact.to_dict() for artifact in self.artifact_files]
        data["warnings"] = list(self.warnings)
        data["modified_skill_files"] = list(self.modified_skill_files)
        return data
