"""A :class:`Workspace`: one session's folder, shared by all runtimes.

It owns the folder layout, staging, inputs, the run folders, the
environment, output collection and the result; the runtime only executes the
prepared command (see :mod:`.runtime`).
"""

from __future__ import annotations

import io
import json
import os
import stat
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..excerpt import excerpt
from ..skill import Skill
from .confined import (
    open_folder,
    open_inside,
    relative_parts,
    write_file,
    write_file_renamed,
)
from .environment import build_environment
from .errors import StagingError, WorkspaceError
from .interactive import ExecSession, ExecSessions, OutputStream
from .layout import Layout
from .outputs import collect_outputs
from .process import ProcessOutcome, ProcessRegistry, new_tag
from .removal import remove_tree
from .requests import (
    ExecRequest,
    ExecRequestFields,
    OutputCollection,
    RunRequest,
    RunRequestFields,
    input_name,
    output_collection,
    timeout_seconds,
)
from .result import (
    ARTIFACT_CAP_BYTES,
    ArtifactFile,
    OutputFile,
    RunResult,
)
from .spec import ExecSpec, PreparedRun, check_text
from .staging import (
    Snapshot,
    StagedSkill,
    changed_files,
    fingerprint,
    snapshot,
    stage_skill,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .runtime import Runtime

InputValue = bytes | str | Path


#: ``save(name, stream, mime_type) -> version``: where ``save_as_artifacts`` puts the bytes; the
#: stream is a binary file object holding the file's bytes (read it in chunks).
ArtifactSaver = Callable[[str, BinaryIO, str], int]


class Workspace:
    """One session's folder: staged skills, inputs, outputs and a run folder per execution.

    ``defer_metadata``: ``metadata.json`` is first written by what the caller does next
    (a staging, inputs, or :meth:`write_pending_metadata`), not twice in a row; it is
    always written before a command starts and when a kept workspace closes.
    """

    def __init__(
        self,
        runtime: Runtime,
        path: Path,
        session_id: str,
        *,
        defer_metadata: bool = False,
    ) -> None:
        self.runtime = runtime
        self.path = path
        self.session_id = session_id
        self.layout = Layout(path)
        self.keep = runtime.keep_workspaces
        self.staged: dict[str, StagedSkill] = {}
        self.artifact_saver: ArtifactSaver = self._save_artifact_in_workspace
        self.closed = False
        #: The runs in progress (their processes); closing the workspace kills them.
        self.processes = ProcessRegistry()
        self._lock = threading.RLock()
        self._artifact_versions: dict[str, int] = {}
        self.exec_sessions = ExecSessions(self)
        self._metadata: dict[str, Any] = {
            "version": 1,
            "created_at": _now(),
            "skills": {},
            "inputs": [],
            "outputs": [],
        }
        self._metadata_written = False
        self.layout.create()
        if not defer_metadata:
            self._write_metadata()

    # -- staging and inputs -------------------------------------------------------------------

    @property
    def out_dir(self) -> Path:
        return self.layout.out

    @property
    def work_dir(self) -> Path:
        return self.layout.work

    @property
    def inputs_dir(self) -> Path:
        return self.layout.inputs

    @property
    def link_staged(self) -> list[StagedSkill]:
        """The skills staged by links: their sources lie outside the workspace."""
        return [staged for staged in self.staged.values() if staged.mode == "link"]

    def stage_skill(self, skill: Skill) -> StagedSkill:
        """Stage ``skill``; a no-op while its source is unchanged, a fresh stage after edits."""
        source = skill.directory.resolve()
        return self._stage(skill, source, snapshot(source))

    def _stage(self, skill: Skill, source: Path, source_state: Snapshot) -> StagedSkill:
        """Stage ``skill`` from its real folder ``source``, whose state is ``source_state``."""
        self._check_open()
        digest = fingerprint(source_state)
        with self._lock:
            current = self.staged.get(skill.name)
            if current is not None and current.source != source:
                raise StagingError(
                    f"{skill.directory}: a different skill named {skill.name!r} is already staged"
                    f" in this workspace from {current.source}; use another workspace"
                )
            if current is not None and current.digest == digest and _real_folder(current.target):
                return current
            mode = "copy" if self.runtime.copies_skills else self.runtime.stage_mode
            with open_folder(self.path, "skills", create=True, what="skills folder"):
                pass  # a real folder of the workspace, not a link a command left there
            staged = stage_skill(skill, self.layout.skills, mode, digest, source=source)
            self.staged[staged.name] = staged
            self._metadata["skills"][staged.name] = {
                "name": staged.name,
                "rel_path": f"skills/{staged.name}",
                "digest": staged.digest,
                "mounted": staged.mode == "link",
                "mode": staged.mode,
                "source": str(staged.source),
                "staged_at": _now(),
            }
            self._write_metadata()
            return staged

    def put_inputs(self, files: Mapping[str, InputValue]) -> list[Path]:
        """Write files into ``work/inputs`` (bytes, text, or a host file to copy), read-only.

        A name is a relative path inside ``work/inputs``; ``..``, absolute paths,
        NUL bytes and a symlink on the way are refused before anything is written.
        """
        self._check_open()
        written: list[Path] = []
        for relative, value in files.items():
            destination = f"work/inputs/{input_name(relative)}"
            if isinstance(value, Path):
                with open(value, "rb") as source:
                    target = write_file(self.path, destination, source, mode=0o444, what="input")
            else:
                data = value.encode("utf-8") if isinstance(value, str) else value
                target = write_file(self.path, destination, data, mode=0o444, what="input")
            self._metadata["inputs"].append(
                {
                    "src": str(value) if isinstance(value, Path) else "inline",
                    "dst": destination,
                    "mode": "copy",
                    "timestamp": _now(),
                }
            )
            written.append(target)
        self._write_metadata()
        return written

    # -- running ------------------------------------------------------------------------------

    def run(
        self,
        skill: Skill | str,
        command: str,
        request: RunRequest | None = None,
        **fields: Unpack[RunRequestFields],
    ) -> RunResult:
        """Run ``bash -lc command`` in the staged skill folder (staging it first if needed),
        as ``request`` (or its fields as keywords) says."""
        self._check_open()
        request = replace(request or RunRequest(), **fields)
        stdin = request.stdin
        if isinstance(stdin, str):
            check_text("stdin", stdin, nul_allowed=True)
        collect = output_collection(request)
        with self._lock:
            prepared = self.prepare_run(skill, command, request)
            spec = replace(prepared.spec, stdin_path=self._stdin_file(stdin, prepared.run_dir))
            outcome = self.runtime.execute(self, spec)
            return self.finish_run(prepared, outcome, collect)

    def exec(
        self,
        skill: Skill | str,
        command: str,
        request: ExecRequest | None = None,
        **fields: Unpack[ExecRequestFields],
    ) -> ExecSession:
        """Start ``bash -lc command`` as an interactive session (see :mod:`.interactive`).

        The command is prepared exactly as :meth:`run` prepares it; the session
        keeps the process running, takes stdin and yields its output as it comes.
        """
        request = replace(request or ExecRequest(), **fields)
        stdin = request.stdin
        if isinstance(stdin, str):
            check_text("stdin", stdin, nul_allowed=True)
        collect = output_collection(request)
        session_id = self.exec_sessions.reserve()
        prepared = self.prepare_run(skill, command, request, tool="skill_exec")
        stream = OutputStream(prepared.spec.cap)
        process = self.runtime.start_interactive(self, prepared.spec, stream, tty=request.tty)
        session = ExecSession(session_id, self, prepared, stream, process, collect)
        self.exec_sessions.add(session)
        if stdin:
            session.send_stdin(stdin.encode("utf-8") if isinstance(stdin, str) else stdin)
        return session

    def prepare_run(
        self, skill: Skill | str, command: str, request: RunRequest, *, tool: str = "skill_run"
    ) -> PreparedRun:
        """Check the arguments, stage the skill, make the run folder and the :class:`ExecSpec`."""
        self._check_open()
        if not isinstance(command, str) or not command.strip():
            raise WorkspaceError(f"{tool} needs a non-empty command")
        check_text("command", command)
        check_text("cwd", request.cwd)
        with self._lock:
            if isinstance(skill, str):
                skill = Skill.load(self._staged_by_name(skill).source)
            source = skill.directory.resolve()
            source_state = snapshot(source)
            staged = self._stage(skill, source, source_state)
            watched = self._watch(staged, source_state)
            run_dir = self._new_run_dir()
            spec = ExecSpec(
                command=command,
                cwd=self._resolve_cwd(request.cwd, staged, run_dir),
                env=build_environment(
                    workspace_vars=self._variables(run_dir, staged),
                    home=str(self.layout.home),
                    extra=request.env,
                    tag=new_tag(),
                ),
                stdin_path=None,
                timeout=timeout_seconds(request.timeout),
                run_dir=run_dir,
            )
            self.write_pending_metadata()  # before the command can read it
            return PreparedRun(spec, staged, run_dir, watched)

    def _watch(
        self, staged: StagedSkill, source_state: Snapshot
    ) -> dict[str, tuple[Path, Snapshot]]:
        """What a run could change unnoticed: nothing where the runtime mounts the skill tree
        read-only; else the staged folder and the skill's own folder."""
        if self.runtime.guards_skill_tree:
            return {}
        return {
            "staged": (staged.target, snapshot(staged.target)),
            "source": (staged.source, source_state),
        }

    def finish_run(
        self, prepared: PreparedRun, outcome: ProcessOutcome, collect: OutputCollection
    ) -> RunResult:
        """The :class:`RunResult` of a finished command: outputs collected, warnings made."""
        with self._lock:
            changes = {
                kind: changed_files(state, snapshot(path))
                for kind, (path, state) in prepared.watched.items()
            }
            staged = prepared.staged
            if changes.get("staged") and self.staged.get(staged.name) == staged:
                self.staged[staged.name] = replace(staged, digest="")  # next run: a fresh copy
            return self._result(outcome, staged, prepared.run_dir, changes, collect)

    def _variables(self, run_dir: Path, staged: StagedSkill) -> dict[str, str]:
        variables = {key: str(value) for key, value in self.layout.variables(run_dir).items()}
        variables["SKILL_NAME"] = staged.name
        return variables

    def _staged_by_name(self, name: str) -> StagedSkill:
        try:
            return self.staged[name]
        except KeyError:
            known = ", ".join(sorted(self.staged)) or "(none)"
            raise WorkspaceError(
                f"skill {excerpt(name)} is not staged in this workspace (staged: {known});"
                " pass the Skill object to run() or call stage_skill() first"
            ) from None

    def _new_run_dir(self) -> Path:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%f")
        with open_folder(self.path, "runs", create=True, what="run folder") as runs:
            for attempt in range(1000):
                name = f"run_{stamp}{f'_{attempt}' if attempt else ''}"
                try:
                    os.mkdir(name, dir_fd=runs)
                except FileExistsError:
                    continue
                return self.layout.runs / name
        raise WorkspaceError(f"cannot create a run folder under {self.layout.runs}")

    def _resolve_cwd(self, cwd: str, staged: StagedSkill, run_dir: Path) -> Path:
        if not cwd.strip():
            return staged.target
        sources = [item.source for item in self.link_staged]
        resolved = self.layout.confine(cwd, staged.target, "cwd", run_dir, sources)
        real, real_root = resolved.resolve(), self.path.resolve()
        if real.is_relative_to(real_root) and not real.is_relative_to(real_root / "skills"):
            # Made (or checked) one folder at a time, never through a link planted meanwhile.
            with open_folder(real_root, real.relative_to(real_root).as_posix(), create=True):
                return resolved
        if not resolved.is_dir():
            raise WorkspaceError(
                f"cwd {excerpt(cwd)} ({excerpt(str(resolved), quoted=False)}) is not an existing"
                " folder of the staged skill"
            )
        return resolved

    def _stdin_file(self, stdin: str | bytes, run_dir: Path) -> Path | None:
        if not stdin:
            return None
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        return write_file(self.path, f"runs/{run_dir.name}/.stdin", data, what="stdin file")

    def _result(
        self,
        outcome: ProcessOutcome,
        staged: StagedSkill,
        run_dir: Path,
        changes: Mapping[str, list[str]],
        collect: OutputCollection,
    ) -> RunResult:
        patterns = collect.output_files
        warnings: list[str] = []
        stdout, stdout_ok = outcome.stdout.text()
        stderr, stderr_ok = outcome.stderr.text()
        for stream, capture, valid in (
            ("stdout", outcome.stdout, stdout_ok),
            ("stderr", outcome.stderr, stderr_ok),
        ):
            if capture.truncated:
                warnings.append(f"{stream} truncated: kept {capture.cap} of {capture.total} bytes")
            if not valid:
                warnings.append(f"{stream} is not valid UTF-8; invalid bytes shown as U+FFFD")
        if outcome.timed_out:
            warnings.append(
                f"command timed out after {outcome.duration_ms / 1000:.1f}s; all its processes were"
                " killed (stdout and stderr keep what was printed before)"
            )
        if self.closed:
            warnings.append(
                "the workspace was closed while the command ran; all its processes were killed"
            )
        staged_changes, source_changes = changes.get("staged", []), changes.get("source", [])
        if staged_changes:
            warnings.append(
                f"the command modified the skill tree of {staged.name!r} in the workspace"
                f" (skills/{staged.name}): {_shown(staged_changes)}; the skill's own folder"
                f" {staged.source} is unchanged and the next run gets a fresh copy; skills must"
                " write into $OUTPUT_DIR or $WORK_DIR"
            )
        if source_changes:
            warnings.append(
                f"the command modified the skill's own folder {staged.source}:"
                f" {_shown(source_changes)}; the {self.runtime.name} runtime cannot stop a command"
                " that writes to the folder's host path on purpose - use the sandbox or docker"
                " runtime"
            )
        if staged.left_out:
            warnings.append(
                f"the copy of {staged.name!r} in the workspace leaves out"
                f" {_shown(list(staged.left_out))}: a symbolic link leading outside the skill"
                " folder is never followed (nothing outside it reaches the workspace); copy what"
                " it points to into the skill"
            )
        collection = collect_outputs(
            patterns,
            root=self.path,
            expand=lambda text: self.layout.expand(text, run_dir),
            allowed_outside=[(item.source, f"skills/{item.name}") for item in self.link_staged],
        )
        warnings.extend(collection.warnings)
        files = collection.files
        if outcome.exit_code != 0 or outcome.timed_out:
            empty = [output for output in files if output.size_bytes == 0]
            if empty:
                files = [output for output in files if output.size_bytes != 0]
                warnings.append(
                    "empty output_files omitted because command failed; shell redirections can"
                    " create empty files before execution fails"
                )
        artifacts: list[ArtifactFile] = []
        if collect.save_as_artifacts:
            artifacts = self._save_artifacts(files, warnings)
        if collect.omit_inline_content:
            files = [replace(output, content="") for output in files]
        if patterns:  # like the reference, metadata records output collections, not every run
            self._metadata["outputs"].append(
                {
                    "globs": list(patterns),
                    "saved_as": [a.name for a in artifacts],
                    "versions": [a.version for a in artifacts],
                }
            )
            self._metadata["last_access"] = _now()
            self._write_metadata()
        return RunResult(
            stdout=stdout,
            stderr=stderr,
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
            duration_ms=outcome.duration_ms,
            output_files=tuple(files),
            artifact_files=tuple(artifacts),
            warnings=tuple(warnings),
            stdout_truncated=outcome.stdout.truncated,
            stderr_truncated=outcome.stderr.truncated,
            stdout_bytes=outcome.stdout.total,
            stderr_bytes=outcome.stderr.total,
            modified_skill_files=tuple(sorted({*staged_changes, *source_changes})),
            run_dir=run_dir,
        )

    def _save_artifacts(
        self, files: Sequence[OutputFile], warnings: list[str]
    ) -> list[ArtifactFile]:
        """Stream each file's bytes to ``artifact_saver``, within :data:`ARTIFACT_CAP_BYTES`."""
        saved: list[ArtifactFile] = []
        budget = ARTIFACT_CAP_BYTES
        allowed = [self.path.resolve(), *(item.source for item in self.link_staged)]
        for output in files:
            try:
                with open_inside(output.path, allowed) as handle:
                    size = os.fstat(handle.fileno()).st_size
                    if size > budget:
                        warnings.append(
                            f"output file {output.name!r} ({size} bytes) not saved as an artifact:"
                            f" the artifacts of one run are capped at {ARTIFACT_CAP_BYTES} bytes"
                        )
                        continue
                    budget -= size
                    version = self.artifact_saver(
                        output.name,
                        io.BufferedReader(LimitedReader(handle, size)),
                        output.mime_type,
                    )
            except (OSError, WorkspaceError) as error:
                warnings.append(f"output file {output.name!r} not saved as an artifact: {error}")
                continue
            saved.append(ArtifactFile(output.name, version))
        return saved

    def _save_artifact_in_workspace(self, name: str, data: BinaryIO, mime_type: str) -> int:
        """Default artifact store: ``artifacts/<version>/<name>`` inside the workspace."""
        relative_parts(name, "artifact name")  # no '..', not absolute, no NUL
        version = self._artifact_versions.get(name, -1) + 1
        write_file(self.path, f"artifacts/{version}/{name}", data, what="artifact name")
        self._artifact_versions[name] = version
        return version

    # -- lifetime -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise WorkspaceError(f"workspace {self.path} is closed")

    def write_pending_metadata(self) -> None:
        """Write ``metadata.json`` if it was deferred and nothing has written it yet; not
        once the workspace is closed (:meth:`close` writes a kept one's, a removed one has
        none), also when another thread closes it meanwhile."""
        if self._metadata_written:
            return
        with self._lock:
            if not self._metadata_written and not self.closed:
                self._write_metadata()

    def _write_metadata(self) -> None:
        self._metadata["updated_at"] = _now()
        data = json.dumps(self._metadata, indent=2).encode("utf-8")
        metadata = self.layout.metadata.name
        write_file_renamed(
            self.path, metadata, data, temporary=".metadata.tmp", mode=0o600, what="metadata"
        )
        self._metadata_written = True

    def close(self) -> None:
        """Kill every command still running (runs and interactive sessions), release the
        runtime's resources, delete the folder (unless ``keep``).

        Safe from another thread while a ``run`` is in progress: its command is
        killed, and the folder is removed once that run has returned.
        """
        if self.closed:
            return
        self.closed = True
        try:
            self.processes.close()
            self.exec_sessions.close()
        finally:
            with self._lock:
                try:
                    self.runtime.release(self)
                finally:
                    self.runtime.forget(self)
                    if self.keep:
                        if not self._metadata_written:
                            self._write_kept_metadata()
                    else:
                        remove_tree(self.path, alongside="skills")  # its biggest part

    def _write_kept_metadata(self) -> None:
        try:
            self._write_metadata()
        except OSError as error:  # the folder removed or made unwritable by a command
            raise WorkspaceError(
                f"the kept workspace {self.path} has no metadata.json: it cannot be written"
                f" ({error.strerror or error}); the folder was changed by a command"
            ) from error

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Workspace {self.runtime.name} {self.path}>"


def _real_folder(path: Path) -> bool:
    """A folder, not a link to one (a command may have swapped the staged folder for a link)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class LimitedReader(io.RawIOBase):
    """A binary stream giving at most ``limit`` bytes of ``source``."""

    def __init__(self, source: BinaryIO, limit: int) -> None:
        self._source = source
        self._left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        count = self._source.readinto(view)  # type: ignore[attr-defined]
        self._left -= count or 0
        return count or 0


def _shown(names: Sequence[str], limit: int = 10) -> str:
    return ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()
