"""Measurement: what the static audit catches and what it flags wrongly.

    python bench/audit_corpus.py [--corpus DIR] [--examples PATH ...]

* tests/fixtures/audit: a table of every case (malicious: the rules it must be flagged with at
  high or above; benign: its bait, and that nothing reaches high), static recall over the
  malicious skills a static rule can see, and false positives over the benign ones;
* real skills: the public corpus (--corpus, default ../shared/corpus beside the checkout) and
  every example skill of the repository (--examples, default skills/, example_suite/ and the
  benign skills of tests/fixtures): the share with a high or critical finding (goal: at most
  2%), each such skill listed with its findings and why they fire, and the medium ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_agent_skills.audit.model import SkillAudit
from pytest_agent_skills.audit.scan import audit_skill
from pytest_agent_skills.audit.severity import rank
from pytest_agent_skills.rules import skill_dirs

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "fixtures" / "audit"
CORPUS_CANDIDATES = (REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus")
GOAL = 0.02


def grave(audit: SkillAudit) -> list[str]:
    return sorted({f.rule for f in audit.findings if rank(f.severity) <= rank("high")})


def cases(root: Path) -> None:
    caught = static_cases = false_positives = benign = 0
    print(f"{'kind':<10} {'skill':<24} {'expected (high+)':<44} {'found (high+)':<44} verdict")
    for kind in ("malicious", "benign"):
        for skill in sorted(path for path in (root / kind).iterdir() if path.is_dir()):
            expected = json.loads(skill.with_name(skill.name + ".expect.json").read_text())
            found = grave(audit_skill(skill))
            if kind == "benign":
                benign += 1
                verdict = "ok" if not found else "FALSE POSITIVE"
                false_positives += bool(found)
                wanted = f"none (bait: {expected.get('bait', '')})"
            elif not expected["static"]:
                verdict = "run time only"
                wanted = "- (dynamic)"
            else:
                static_cases += 1
                hit = set(expected["static"]) <= set(found)
                caught += hit
                verdict = "caught" if hit else "MISSED"
                wanted = ", ".join(expected["static"])
            shown = ", ".join(found)[:44]
            print(f"{kind:<10} {skill.name:<24} {wanted[:44]:<44} {shown:<44} {verdict}")
    print(f"static recall: {caught} of {static_cases} malicious skills a static rule can see")
    print(f"benign false positives: {false_positives} of {benign}")


def real_skills(label: str, roots: list[Path]) -> None:
    folders = [folder for root in roots for folder in skill_dirs(root)]
    folders = [folder for folder in folders if "audit/malicious" not in folder.as_posix()]
    flagged = []
    medium = []
    for folder in folders:
        audit = audit_skill(folder)
        if grave(audit):
            flagged.append((folder, audit))
        elif any(f.severity == "medium" for f in audit.findings):
            medium.append((folder, audit))
    share = len(flagged) / len(folders) if folders else 0.0
    verdict = "holds" if share <= GOAL else "over the goal"
    print(
        f"{label}: {len(flagged)} of {len(folders)} skills with a high or critical finding ="
        f" {share:.1%} (goal <= {GOAL:.0%}: {verdict}); {len(medium)} with medium at most"
    )
    for folder, audit in flagged + medium:
        for f in audit.findings:
            if rank(f.severity) <= rank("medium"):
                print(f"  {folder}/{f.file}:{f.line}: {f.severity} [{f.rule}] {f.message}")
                print(f"      {f.evidence[:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="a folder of real skills")
    parser.add_argument("--examples", type=Path, nargs="*", help="the repository's example skills")
    parser.add_argument("--cases", type=Path, default=CASES, help="the malicious/benign corpus")
    args = parser.parse_args()
    cases(args.cases)
    corpus = args.corpus or next((path for path in CORPUS_CANDIDATES if path.is_dir()), None)
    if corpus is None:
        print("public corpus: absent (../shared/corpus); skipped")
    else:
        real_skills("public corpus", [corpus])
    examples = args.examples
    if examples is None:
        examples = [REPO / "skills", REPO / "example_suite", REPO / "tests" / "fixtures"]
    real_skills("repository examples", examples)


if __name__ == "__main__":
    main()
