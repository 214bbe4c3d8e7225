"""bench/validate.py runs on a few skills and prints every figure and ratio line."""

from __future__ import annotations

from pathlib import Path

from tests.support.bench import NUMBER, assert_lines, run_bench
from tests.support.skill_files import write_skill


def test_the_validate_bench_prints_its_figures_and_ratios(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_skill(
        corpus,
        "guide",
        body="Read [the guide](docs/guide.md).\n",
        files={"docs/guide.md": "# Guide\n"},
    )
    write_skill(corpus / "nested", "Broken_Name")
    output = run_bench(
        "validate.py",
        "--corpus",
        str(corpus),
        "--sizes",
        "12",
        "--linear",
        "5",
        "10",
        "--runs",
        "1",
    )
    assert_lines(
        output,
        rf"^cpus: \d+, load average {NUMBER} {NUMBER} {NUMBER}",
        r"^corpus: 2 skills, best of 1",
        rf"^  ours, paths +{NUMBER} +{NUMBER}$",
        rf"^  ours, folder +{NUMBER} +{NUMBER}$",
        rf"^  ours, 1 job +{NUMBER} +{NUMBER}$",
        rf"^  skills-ref +{NUMBER} +{NUMBER}$",
        r"^  skills-ref found 2 skill folders$",
        r"^generated 12: 12 skills",
        *(
            rf"^    {stage} +{NUMBER}$"
            for stage in (
                "interpreter start",
                "imports",
                "discovery",
                "parsing",
                "checks",
                r"output \(text\)",
            )
        ),
        rf"^corpus, ours, paths: skills-ref {NUMBER} ms / ours {NUMBER} ms = {NUMBER}x",
        rf"^generated 12, ours, folder: skills-ref {NUMBER} ms / ours {NUMBER} ms = {NUMBER}x"
        rf" \(CPU {NUMBER}x; goal >= 10x: (holds|below the goal)\)$",
        rf"^generated 12, ours, 1 job: skills-ref {NUMBER} ms / ours {NUMBER} ms = {NUMBER}x",
        rf"^ +5 skills: ours, paths +{NUMBER}  ours, folder +{NUMBER}$",
        rf"^  ours, folder: per skill at 10 / at 5 = {NUMBER} \(goal: about 1, linear\)$",
        rf"^after: load average {NUMBER}",
    )
