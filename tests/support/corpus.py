"""Where the public skills corpus is: ``../shared/corpus`` beside the repository, or beside a
folder holding the repository's worktrees.  Tests that read it skip when it is absent."""

from __future__ import annotations

from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]

CORPUS = next(
    (
        folder / "shared" / "corpus"
        for folder in _TESTS.parents
        if (folder / "shared" / "corpus").is_dir()
    ),
    _TESTS.parent.parent / "shared" / "corpus",
)
