"""A :class:`Workspace`: one session's folder, shared by all runtimes.

It owns the folder layout, staging, inputs, the run folders, the
environment, output collection and the result; the runtime only executes the
prepared command (see :mod:`.runtime`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..skill import Skill
from .environment import build_environment
from .errors import StagingError, WorkspaceError
from .interactive import ExecSession, ExecSessions, OutputCollection, OutputStream
from .layout import Layout
from .outputs import collect_outputs
from .process import ProcessOutcome
from .result import (
    DEFAULT_TIMEOUT_SECONDS,
    MAX_TIMEOUT_SECONDS,
    ArtifactFile,
    OutputFile,
    RunResult,
)
from .runtime import ExecSpec
from .staging import (
    Snapshot,
    StagedSkill,
    changed_files,
    fingerprint,
    remove_tree,
    snapshot,
    stage_skill,
)

if TYPE_CHECKING:
    from .runtime import Runtime

InputValue = bytes | str | Path


@dataclass(frozen=True)
class PreparedRun:
    """A command ready to execute: its spec, the staged skill, its run folder, and the
    skill-tree snapshots to compare after it (runtimes that do not guard the tree)."""

    spec: ExecSpec
    staged: StagedSkill
    run_dir: Path
    before: list[tuple[Path, Snapshot]]
#: ``save(name, data, mime_type) -> version``: where ``save_as_artifacts`` puts the bytes.
ArtifactSaver = Callable[[str, bytes, str], int]


class Workspace:
    """One session's folder: staged skills, inputs, outputs and a run folder per execution."""

    def __init__(self, runtime: Runtime, path: Path, session_id: str) -> None:
        self.runtime = runtime
        self.path = path
        self.session_id = session_id
        self.layout = Layout(path)
        self.keep = runtime.keep_workspaces
        self.staged: dict[str, StagedSkill] = {}
        self.artifact_saver: ArtifactSaver = self._save_artifact_in_workspace
        self.closed = False
        self._lock = threading.RLock()
        self._artifact_versions: dict[str, int] = {}
        self.exec_sessions = ExecSessions(self)
        self._metadata: dict = {
            "version": 1,
            "created_at": _now(),
            "skills": {},
            "inputs": [],
            "outputs": [],
        }
        self.layout.create()
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
    def skills_dir(self) -> Path:
        return self.layout.skills

    @property
    def link_staged(self) -> list[StagedSkill]:
        """The skills staged by links: their sources lie outside the workspace."""
        return [staged for staged in self.staged.values() if staged.mode == "link"]

    def stage_skill(self, skill: Skill) -> StagedSkill:
        """Stage ``skill``; a no-op while its source is unchanged, a fresh stage after edits."""
        return self._stage(skill, snapshot(skill.directory.resolve()))

    def _stage(self, skill: Skill, source_state: Snapshot) -> StagedSkill:
        self._check_open()
        digest = fingerprint(source_state)
        with self._lock:
            current = self.staged.get(skill.name)
            if current is not None and current.source != skill.directory.resolve():
                raise StagingError(
                    f"{skill.directory}: a different skill named {skill.name!r} is already staged"
                    f" in this workspace from {current.source}; use another workspace"
                )
            if current is not None and current.digest == digest and current.target.is_dir():
                return current
            staged = stage_skill(skill, self.layout.skills, self.runtime.stage_mode, digest)
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
        """Write files into ``work/inputs`` (bytes, text, or a host file to copy), read-only."""
        self._check_open()
        written: list[Path] = []
        for relative, value in files.items():
            target = self.layout.confine(relative, self.layout.inputs, "input name")
            if target == self.layout.inputs or not target.is_relative_to(self.layout.inputs):
                raise WorkspaceError(
                    f"input name {relative!r} must name a file inside work/inputs"
                    " (a relative path without '..')"
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                target.chmod(0o600)
            data = value.read_bytes() if isinstance(value, Path) else value
            if isinstance(data, str):
                target.write_text(data, encoding="utf-8")
            else:
                target.write_bytes(data)
            target.chmod(0o444)
            self._metadata["inputs"].append(
                {
                    "src": str(value) if isinstance(value, Path) else "inline",
                    "dst": target.relative_to(self.path).as_posix(),
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
        *,
        output_files: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str | bytes = "",
        save_as_artifacts: bool = False,
        omit_inline_content: bool = False,
        cwd: str = "",
    ) -> RunResult:
        """Run ``bash -lc command`` in the staged skill folder (staging it first if needed)."""
        self._check_open()
        if isinstance(stdin, str):
            check_text("stdin", stdin, nul_allowed=True)
        with self._lock:
            prepared = self.prepare_run(skill, command, env=env, timeout=timeout, cwd=cwd)
            spec = replace(prepared.spec, stdin_path=self._stdin_file(stdin, prepared.run_dir))
            outcome = self.runtime.execute(self, spec)
            return self.finish_run(
                prepared, outcome, output_files, save_as_artifacts, omit_inline_content
            )

    def exec(
        self,
        skill: Skill | str,
        command: str,
        *,
        output_files: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str = "",
        save_as_artifacts: bool = False,
        omit_inline_content: bool = False,
        cwd: str = "",
        tty: bool = False,
    ) -> ExecSession:
        """Start ``bash -lc command`` as an interactive session (see :mod:`.interactive`).

        The command is prepared exactly as :meth:`run` prepares it; the session
        keeps the process running, takes stdin and yields its output as it comes.
        """
        check_text("stdin", stdin, nul_allowed=True)
        if isinstance(output_files, str):
            output_files = [output_files]
        session_id = self.exec_sessions.reserve()
        prepared = self.prepare_run(
            skill, command, env=env, timeout=timeout, cwd=cwd, tool="skill_exec"
        )
        stream = OutputStream(prepared.spec.cap)
        process = self.runtime.start_interactive(self, prepared.spec, stream, tty=tty)
        collect = OutputCollection(tuple(output_files), save_as_artifacts, omit_inline_content)
        session = ExecSession(session_id, self, prepared, stream, process, collect)
        self.exec_sessions.add(session)
        if stdin:
            session.send(stdin.encode("utf-8"))
        return session

    def prepare_run(
        self,
        skill: Skill | str,
        command: str,
        *,
        env: Mapping[str, str] | None,
        timeout: float | None,
        cwd: str,
        tool: str = "skill_run",
    ) -> PreparedRun:
        """Check the arguments, stage the skill, make the run folder and the :class:`ExecSpec`."""
        self._check_open()
        if not isinstance(command, str) or not command.strip():
            raise WorkspaceError(f"{tool} needs a non-empty command")
        check_text("command", command)
        check_text("cwd", cwd)
        with self._lock:
            if isinstance(skill, str):
                skill = Skill.load(self._staged_by_name(skill).source)
            source_state = snapshot(skill.directory.resolve())
            staged = self._stage(skill, source_state)
            # What the run could change unnoticed: the staged folder and, for link staging, the
            # source its links lead to (only where the runtime does not mount them read-only).
            before: list[tuple[Path, Snapshot]] = []
            if not self.runtime.guards_skill_tree:
                before.append((staged.target, snapshot(staged.target)))
                if staged.mode == "link":
                    before.append((staged.source, source_state))
            run_dir = self._new_run_dir()
            spec = ExecSpec(
                command=command,
                cwd=self._resolve_cwd(cwd, staged, run_dir),
                env=build_environment(
                    workspace_vars=self._variables(run_dir, staged),
                    home=str(self.layout.home),
                    extra=env,
                ),
                stdin_path=None,
                timeout=_timeout_seconds(timeout),
                run_dir=run_dir,
            )
            return PreparedRun(spec, staged, run_dir, before)

    def finish_run(
        self,
        prepared: PreparedRun,
        outcome: ProcessOutcome,
        output_files: Sequence[str],
        save_as_artifacts: bool,
        omit_inline_content: bool,
    ) -> RunResult:
        """The :class:`RunResult` of a finished command: outputs collected, warnings made."""
        if isinstance(output_files, str):
            output_files = [output_files]
        with self._lock:
            modified = sorted(
                {
                    name
                    for path, state in prepared.before
                    for name in changed_files(state, snapshot(path))
                }
            )
            return self._result(
                outcome,
                prepared.staged,
                prepared.run_dir,
                output_files,
                modified,
                save_as_artifacts,
                omit_inline_content,
            )

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
                f"skill {name!r} is not staged in this workspace (staged: {known});"
                " pass the Skill object to run() or call stage_skill() first"
            ) from None

    def _new_run_dir(self) -> Path:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%f")
        for attempt in range(1000):
            candidate = self.layout.runs / f"run_{stamp}{f'_{attempt}' if attempt else ''}"
            try:
                candidate.mkdir()
            except FileExistsError:
                continue
            return candidate
        raise WorkspaceError(f"cannot create a run folder under {self.layout.runs}")

    def _resolve_cwd(self, cwd: str, staged: StagedSkill, run_dir: Path) -> Path:
        if not cwd.strip():
            return staged.target
        sources = [item.source for item in self.link_staged]
        resolved = self.layout.confine(cwd, staged.target, "cwd", run_dir, sources)
        if not resolved.is_dir():
            if resolved.is_relative_to(self.layout.skills) or resolved.exists():
                raise WorkspaceError(
                    f"cwd {cwd!r} ({resolved}) is not an existing folder of the staged skill"
                )
            resolved.mkdir(parents=True)
        return resolved

    @staticmethod
    def _stdin_file(stdin: str | bytes, run_dir: Path) -> Path | None:
        if not stdin:
            return None
        path = run_dir / ".stdin"
        path.write_bytes(stdin.encode("utf-8") if isinstance(stdin, str) else stdin)
        return path

    def _result(
        self,
        outcome: ProcessOutcome,
        staged: StagedSkill,
        run_dir: Path,
        patterns: Sequence[str],
        modified: list[str],
        save_as_artifacts: bool,
        omit_inline_content: bool,
    ) -> RunResult:
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
                f"command timed out after {_timeout_text(outcome)}; all its processes were killed"
                " (stdout and stderr keep what was printed before)"
            )
        if modified:
            shown = ", ".join(modified[:10]) + (" ..." if len(modified) > 10 else "")
            warnings.append(
                f"the command modified the skill tree of {staged.name!r} ({staged.source}):"
                f" {shown};"
                " the local runtime cannot prevent this - use the sandbox or docker runtime"
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
        if save_as_artifacts:
            for output in files:
                version = self.artifact_saver(output.name, output.read_bytes(), output.mime_type)
                artifacts.append(ArtifactFile(output.name, version))
        if omit_inline_content:
            files = [_without_content(output) for output in files]
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
            modified_skill_files=tuple(modified),
            run_dir=run_dir,
        )

    def _save_artifact_in_workspace(self, name: str, data: bytes, mime_type: str) -> int:
        """Default artifact store: ``artifacts/<version>/<name>`` inside the workspace."""
        version = self._artifact_versions.get(name, -1) + 1
        self._artifact_versions[name] = version
        target = self.layout.artifacts / str(version) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return version

    # -- lifetime -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise WorkspaceError(f"workspace {self.path} is closed")

    def _write_metadata(self) -> None:
        self._metadata["updated_at"] = _now()
        temporary = self.layout.root / ".metadata.tmp"
        temporary.write_text(json.dumps(self._metadata, indent=2), encoding="utf-8")
        os.replace(temporary, self.layout.metadata)

    def close(self) -> None:
        """Stop its interactive sessions, release the runtime's resources, delete the folder
        (unless ``keep``)."""
        if self.closed:
            return
        self.closed = True
        try:
            self.exec_sessions.close()
            self.runtime.release(self)
        finally:
            self.runtime.forget(self)
            if not self.keep:
                remove_tree(self.path)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Workspace {self.runtime.name} {self.path}>"


def _without_content(output: OutputFile) -> OutputFile:
    return replace(output, content="")


def _timeout_seconds(timeout: float | None) -> float:
    if timeout is None or timeout == 0:
        return DEFAULT_TIMEOUT_SECONDS
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise WorkspaceError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not timeout <= MAX_TIMEOUT_SECONDS:
        raise WorkspaceError(
            f"timeout must be at most {MAX_TIMEOUT_SECONDS} seconds (one day), got {timeout!r}"
        )
    return float(timeout)


def check_text(name: str, value: str, *, nul_allowed: bool = False) -> None:
    """Refuse text no process can be given: NUL bytes in argv/paths, lone surrogates."""
    if not nul_allowed and "\x00" in value:
        raise WorkspaceError(f"{name} must not contain NUL bytes")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise WorkspaceError(
            f"{name} is not valid Unicode text ({error.reason} at position {error.start})"
        ) from None


def _timeout_text(outcome: ProcessOutcome) -> str:
    return f"{outcome.duration_ms / 1000:.1f}s"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()
