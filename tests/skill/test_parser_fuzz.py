"""Property-based tests: 11,500 random, structured and mutated SKILL.md texts and files.

The parser and the validator may only ever raise our own typed errors (in practice
they raise nothing: problems become findings), and each example must finish within
a time limit: a SIGALRM timer turns a hang into a failure instead of a stuck run.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agent_skills.errors import AgentSkillsError
from pytest_agent_skills.rules import RULES, ValidationOptions, validate
from pytest_agent_skills.skill import ParsedSkillFile, Skill, parse_skill_text
from pytest_agent_skills.skill_reference import declared_name
from pytest_agent_skills.yamlguard import duplicate_keys

REPO = Path(__file__).resolve().parents[2]
PATH = Path("fuzz/SKILL.md")
PER_EXAMPLE_SECONDS = 2.0
OPTIONS = ValidationOptions.build(profile="trpc", available_tools=["get_weather", "search"])

SEEDS = [
    "---\nname: x\ndescription: Does x. Use when x.\n---\nBody.\n",
    "---\nname: weather\ndescription: D.\nmetadata:\n  version: '1'\n---\n"
    "Tools:\n- get_weather  # note\n- search\n\n## Usage\n- step one\nUsage:\n- b\n",
    "\ufeff--- \r\nname: [a, b]\r\ndescription: >\r\n  folded\r\n--- \r\n# Title\r\n",
    "---\nname: x\nname: y\ndescription: 'unterminated\n---\n[guide](docs/g.md) scripts/r.py\n",
    "---\n---\n---\n---\nTools:\n---\n-\n- #\n",
    "---\n&a [*a, *a]\n---\n",
    "---\nkey: !!python/object:os.system 'true'\n---\n",
    "---\n? complex\n: key\n{a: b}: c\n---\n",
]
SEEDS += [
    path.read_text(encoding="utf-8", errors="replace")
    for path in sorted((REPO / "skills").glob("*/SKILL.md"))
]

#: Characters that matter to SKILL.md syntax, plus a few letters so keys and names appear.
SKILL_ALPHABET = "-:#\n \t\r'\"[]{}|>&*!%@`,?\\=<\ufeffabcdemnostTlu_/."
KEYS = (
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "version",
    "when_to_use",
    "",
    "  ",
    "name ",
    "? x",
    "<<",
    "- x",
    "tools",
    "metadata:\n  a",
)
VALUES = (
    "x",
    "yes",
    "1.50",
    "2024-01-02",
    "[a, b]",
    "{a: b}",
    "'q'",
    '"q',
    "|",
    ">",
    "~",
    "null",
    "&x a",
    "*x",
    "!!binary aGk=",
    "!!int x",
    "café",
    "a: b",
    "- a",
    "Use when: x",
    "",
    "[unclosed",
    "&r [1, *r]",
    "&m {k: *m}",
    "{<<: {a: b}, c: d}",
    "'it''s'",
    "{a: [b, {c: d}]}",
    "\n  - a\n  - b",
)
BODY_LINES = (
    "Tools:",
    "TOOLS: x",
    "- a",
    "- a  # c",
    "# - old",
    "## Usage",
    "Usage:",
    "-",
    "---",
    "* b",
    "Overview",
    "see [g](docs/g.md)",
    "run scripts/x.py",
    "[x](../up.md)",
    "```",
    "",
    "__BASE_DIR__/assets/a.txt",
    "[s](=[O:2])",
    "- get_weather",
    "- search",
    "prose line",
)
OPEN_FENCES = ("---", "--- ", "", "\ufeff---", "---\t")
CLOSE_FENCES = ("---", "--- ", "...", "", "----")
NEWLINES = ("\n", "\r\n", "\r")
MUTATIONS = ("delete", "insert", "duplicate", "replace")


class Genome:
    """Decodes hypothesis bytes into choices; cheap to generate and shrinks well."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def number(self, limit: int) -> int:
        if self.position + 2 > len(self.data):
            return 0
        value = int.from_bytes(self.data[self.position : self.position + 2], "big")
        self.position += 2
        return value % limit if limit else 0

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return options[self.number(len(options))]

    def raw(self) -> str:
        size = self.number(12)
        chunk = self.data[self.position : self.position + size]
        self.position += size
        return chunk.decode("utf-8", errors="replace")


def structured(data: bytes) -> str:
    genome = Genome(data)
    lines = [genome.pick(OPEN_FENCES)]
    for _ in range(genome.number(7)):
        value = genome.raw() if genome.number(5) == 0 else genome.pick(VALUES)
        lines.append(f"{genome.pick(('', '  ', chr(9)))}{genome.pick(KEYS)}: {value}")
    lines.append(genome.pick(CLOSE_FENCES))
    lines += [genome.pick(BODY_LINES) for _ in range(genome.number(9))]
    return genome.pick(NEWLINES).join(lines)


def mutated(data: bytes) -> str:
    genome = Genome(data)
    text = genome.pick(SEEDS)
    for _ in range(1 + genome.number(4)):
        if not text:
            break
        start = genome.number(len(text))
        end = min(len(text), start + genome.number(40))
        operation = genome.pick(MUTATIONS)
        if operation == "delete":
            text = text[:start] + text[end:]
        elif operation == "insert":
            text = text[:start] + genome.raw() + text[start:]
        elif operation == "duplicate":
            text = text[:end] + text[start:end] + text[end:]
        else:
            text = text[:start] + genome.pick(SKILL_ALPHABET) + text[start + 1 :]
    return text


GENOMES = st.binary(min_size=4, max_size=96)


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(_signum: int, _frame: Any) -> None:
        raise TimeoutError(f"one example took more than {seconds}s: the parser hangs")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_text(text: str, directory: Path, seen: set[str]) -> None:
    with time_limit(PER_EXAMPLE_SECONDS), contextlib.suppress(AgentSkillsError):
        parsed = parse_skill_text(text, PATH)
        assert all(problem.line is None or problem.line >= 1 for problem in parsed.problems)
        if parsed.front_matter is not None and parsed.front_matter.values:
            assert_same_as_plain_pyyaml(text, parsed)
        skill = Skill(directory, parsed)
        assert (declared_name(text) or directory.name.strip()) == skill.name
        findings = validate(skill, OPTIONS)
        assert all(finding.message and finding.rule in RULES for finding in findings)
        seen.update(finding.rule for finding in findings)


def assert_same_as_plain_pyyaml(text: str, parsed: ParsedSkillFile) -> None:
    """The fast front-matter construction gives PyYAML's data and the same repeated keys."""
    front = parsed.front_matter
    assert front is not None
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    loader = yaml.CSafeLoader("\n".join(lines[front.open_line : front.close_line - 1]))
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node)
        duplicates = [front.open_line + 1 + line for _key, line in duplicate_keys(node)]
    finally:
        loader.dispose()
    assert repr(front.values) == repr({str(key): value for key, value in data.items()})
    found = [p.line for p in parsed.problems if p.rule == "frontmatter-duplicate-key"]
    assert found == sorted(duplicates)


def run_counted(strategy: st.SearchStrategy[Any], check: Callable[[Any], None], count: int) -> int:
    calls = 0

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(strategy)
    def property_holds(value: Any) -> None:
        nonlocal calls
        calls += 1
        check(value)

    property_holds()
    return calls


#: Rules each generator must reach at least once, so the texts exercise the parser's paths.
REACHED = {"frontmatter-missing", "frontmatter-unclosed"}
STRUCTURED_REACHED = REACHED | {
    "frontmatter-yaml",
    "frontmatter-fence",
    "frontmatter-bom",
    "name-missing",
    "description-missing",
    "tools-empty",
    "reference-missing",
}


@pytest.mark.parametrize(
    ("strategy", "count", "reached"),
    [
        pytest.param(st.text(max_size=300), 2000, set(), id="random-unicode"),
        pytest.param(
            st.text(alphabet=SKILL_ALPHABET, max_size=300),
            2500,
            {"frontmatter-missing"},
            id="syntax",
        ),
        pytest.param(GENOMES.map(structured), 3000, STRUCTURED_REACHED, id="structured"),
        pytest.param(GENOMES.map(mutated), 3000, REACHED | {"frontmatter-yaml"}, id="mutated"),
    ],
)
def test_parser_and_validator_never_raise_or_hang(
    tmp_path: Path, strategy: st.SearchStrategy[str], count: int, reached: set[str]
) -> None:
    seen: set[str] = set()
    assert run_counted(strategy, lambda text: check_text(text, tmp_path, seen), count) >= count
    assert reached <= seen, f"never reached: {sorted(reached - seen)}"


def test_loading_random_bytes_from_disk(tmp_path: Path) -> None:
    skill_file = tmp_path / "SKILL.md"
    seeds = st.sampled_from([seed.encode("utf-8") for seed in SEEDS])
    raw = st.one_of(st.binary(max_size=200), st.tuples(seeds, st.binary(max_size=8)).map(b"".join))

    def check(data: bytes) -> None:
        skill_file.write_bytes(data)
        with time_limit(PER_EXAMPLE_SECONDS), contextlib.suppress(AgentSkillsError):
            validate(Skill.load(tmp_path), OPTIONS)

    assert run_counted(raw, check, 1000) >= 1000
