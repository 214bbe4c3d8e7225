"""What git knows about a repository, asked through the ``git`` program: the files that differ
from a ref (``--changed-since REF``) and a folder as it was at a ref (``--baseline git:REF``).

git runs as a subprocess, read-only: nothing here writes to the repository or its working
tree (a folder at a ref is unpacked from ``git archive`` into a folder the caller gives).
Every failure is a :class:`GitError` that names the ref, the folder and what to do.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .errors import AgentSkillsError

#: What a shallow clone (GitHub's actions/checkout by default) lacks, said with an unknown ref.
_SHALLOW_HINT = (
    "a commit, branch or tag this clone has (a shallow clone, such as actions/checkout's"
    " default, has no history: fetch it with fetch-depth: 0)"
)


class GitError(AgentSkillsError):
    """git could not answer: not a repository, an unknown ref, git missing, a path absent at
    the ref."""


class AbsentAtRefError(GitError):
    """The folder asked for did not exist at the ref."""


@dataclass(frozen=True)
class GitChanges:
    """The files that differ from ``ref`` (resolved to ``commit``) in the work tree ``root``:
    committed since, staged, unstaged and untracked (not ignored) ones, deleted ones too, as
    paths relative to ``root`` with ``/`` separators."""

    ref: str
    commit: str
    root: Path
    paths: frozenset[str]

    @property
    def short(self) -> str:
        """The ref and its commit, as messages show them: ``HEAD~1 (1a2b3c4)``."""
        return f"{self.ref} ({self.commit[:7]})"


def _git(where: Path, *arguments: str) -> subprocess.CompletedProcess[bytes]:
    """``git ARGUMENTS`` run in ``where`` (its output as bytes), or a :class:`GitError` when
    the program is missing."""
    try:
        return subprocess.run(
            ["git", "-C", str(where), *arguments],
            capture_output=True,
            check=False,
            # git's own messages in English whatever the locale: they end up in ours.
            env={**os.environ, "LC_ALL": "C"},
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH); install git") from None


def work_tree(where: Path, purpose: str) -> Path:
    """The top folder of the git work tree holding ``where``; outside one, a
    :class:`GitError` saying what needed it (``purpose``, e.g. ``--changed-since HEAD~1``)."""
    done = _git(where, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitError(
            f"{purpose}: {where} is not inside a git repository (run it in a clone of the"
            " repository, or leave the option out)"
        )
    return Path(os.fsdecode(done.stdout.rstrip(b"\n")))


def resolve_commit(root: Path, ref: str, purpose: str) -> str:
    """The full commit id ``ref`` names in the repository at ``root``, or a
    :class:`GitError` naming the ref."""
    if not ref or ref.startswith("-"):  # never an option of git's
        raise GitError(f"{purpose}: {ref!r} is not a git ref; give {_SHALLOW_HINT}")
    done = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if done.returncode != 0:
        raise GitError(f"{purpose}: unknown git ref {ref!r} in {root}; give {_SHALLOW_HINT}")
    return done.stdout.decode("ascii").strip()


def changes_since(ref: str, where: Path, purpose: str) -> GitChanges:
    """The files of the work tree holding ``where`` that differ from ``ref``: those
    ``git diff REF`` lists (committed since, staged, unstaged; renames as a deletion and an
    addition) and the untracked ones ``.gitignore`` does not exclude."""
    root = work_tree(where, purpose)
    commit = resolve_commit(root, ref, purpose)
    diff = _git(root, "diff", "--name-only", "--no-renames", "--no-relative", "-z", commit, "--")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "--full-name", "-z")
    for done in (diff, untracked):
        if done.returncode != 0:
            raise GitError(f"{purpose}: git failed in {root}: {_stderr(done)}")
    names = (diff.stdout + untracked.stdout).split(b"\0")
    return GitChanges(ref, commit, root, frozenset(os.fsdecode(name) for name in names if name))


def read_at(changes: GitChanges, relative: str) -> bytes | None:
    """The content of the file ``relative`` (to the work tree) at the changes' commit, None
    when it did not exist there."""
    done = _git(changes.root, "show", f"{changes.commit}:{relative}")
    return done.stdout if done.returncode == 0 else None


def relative_in(root: Path, path: Path) -> str | None:
    """``path`` relative to the work tree ``root`` with ``/`` separators (links resolved on
    both sides), or None when it lies outside."""
    try:
        relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return None
    return relative.as_posix() if relative.parts else ""


@dataclass(frozen=True)
class Snapshot:
    """A folder of the repository as it was at ``ref`` (``commit``), unpacked at ``path``."""

    ref: str
    commit: str
    path: Path


def export_folder(ref: str, folder: Path, destination: Path, purpose: str) -> Snapshot:
    """Unpack ``folder`` (a folder of a git work tree) as it was at ``ref`` into
    ``destination`` (a folder to create; its parent must exist), from ``git archive``: the
    working tree and the index are not touched.  A folder that did not exist at the ref is a
    :class:`GitError` naming it."""
    root = work_tree(folder, purpose)
    commit = resolve_commit(root, ref, purpose)
    relative = relative_in(root, folder)
    if relative is None:  # work_tree found it from there: only a link race gets here
        raise GitError(f"{purpose}: {folder} is outside the git work tree {root}")
    tree = f"{commit}:{relative}" if relative else f"{commit}:"
    kind = _git(root, "cat-file", "-t", tree)
    if kind.returncode != 0 or kind.stdout.strip() != b"tree":
        raise AbsentAtRefError(
            f"{purpose}: {relative or '.'} did not exist at {ref} ({commit[:7]}) in {root};"
            " give a ref where it exists, or a folder with --baseline DIR"
        )
    archive = _git(root, "archive", "--format=tar", tree)
    if archive.returncode != 0:
        raise GitError(f"{purpose}: git archive failed in {root}: {_stderr(archive)}")
    destination.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as unpacked:
        unpacked.extractall(destination, filter="data")  # no link or path out of it
    return Snapshot(ref, commit, destination)


def _stderr(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
