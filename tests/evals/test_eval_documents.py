"""The documents evals write: each a typed model whose JSON Schema ships in the package
(``schemas/<name>.schema.json``, equal to the one the model generates), named by the
document's ``$schema``; ``agent-skills schema`` lists and prints them; a document that is not
what it should be is refused with the file, the JSON path, what was expected and what was
found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from bench.support.routing import agent_skills, word_overlap_endpoint, write_repository
from pytest_agent_skills.evals.documents.benchmark_model import BenchmarkDocument
from pytest_agent_skills.evals.documents.catalog import DOCUMENTS, schema_file, schema_of
from pytest_agent_skills.evals.documents.document_io import DocumentError, read_document
from tests.support.evals import Behaviour, fake_endpoint, write_eval_skill

# fmt: off
SKILLS = {
    "csv-stats": (
        "Computes statistics of csv columns (mean, median, deviation).",
        [("mean of a csv column", True), ("median of a csv file", True),
         ("csv column statistics", True), ("deviation of csv values", True),
         ("write my meeting notes", False), ("a poem about data", False),
         ("edit spreadsheet formulas", False), ("translate this sheet", False)],
    ),
    "notes": ("Keeps meeting notes and minutes.", [("write my meeting notes", True)]),
}
# fmt: on


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_shipped_schema_is_the_one_the_model_generates(name: str) -> None:
    shipped = schema_file(name).read_text(encoding="utf-8")
    assert shipped == schema_of(DOCUMENTS[name], name), (
        f"schemas/{name}.schema.json is stale: run"
        " python -m pytest_agent_skills.evals.documents.catalog"
    )
    Draft202012Validator.check_schema(json.loads(shipped))


def test_the_command_lists_the_schemas_and_prints_one(tmp_path: Path) -> None:
    listed = agent_skills("schema", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()[:-1]]
    assert set(DOCUMENTS) | {"evals", "triggers", "scenario"} <= set(names)
    shown = agent_skills("schema", "benchmark", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == schema_file("benchmark").read_text(encoding="utf-8")
    unknown = agent_skills("schema", "benchmarks", cwd=tmp_path)
    assert unknown.returncode == 2
    assert (
        "unknown schema 'benchmarks'; did you mean 'benchmark'? 'agent-skills schema' lists"
        " every schema" in unknown.stderr
    )
    assert "Traceback" not in unknown.stderr


def test_a_document_that_does_not_match_names_the_file_the_path_and_both_kinds(
    tmp_path: Path,
) -> None:
    path = tmp_path / "benchmark.json"
    run = {"eval_id": 1, "configuration": "with_skill", "run_number": 1,
           "result": {"pass_rate": "high"}}  # fmt: skip
    path.write_text(json.dumps({"runs": [run]}))
    with pytest.raises(DocumentError) as raised:
        read_document(BenchmarkDocument, path)
    assert str(raised.value) == (
        f'{path}: runs[0].result.pass_rate: expected a number, found a string "high"'
        " (not a benchmark document)"
    )
    path.write_text('{"runs": [')
    with pytest.raises(DocumentError, match=r"benchmark.json:1: is not valid JSON"):
        read_document(BenchmarkDocument, path)
    path.write_text(json.dumps({"runs": [], "hand_added": 1}))
    with pytest.raises(DocumentError, match=r"hand_added: expected no such field, found a number"):
        read_document(BenchmarkDocument, path)


def _written_documents(root: Path) -> list[Path]:
    """Every JSON file under ``root`` but the skills' own (evals.json, triggers.json) and
    what the model's commands wrote (a run's outputs/)."""
    return sorted(
        path
        for path in root.rglob("*.json")
        if not {"evals", "outputs"} & set(path.relative_to(root).parts[:-1])
    )


def test_every_json_file_the_commands_write_validates_against_its_schema(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path / "suite")
    suite = skill.parent.parent
    common = ("--runtime", "local", "--min-pass-rate", "0", "-q")
    with fake_endpoint(Behaviour(seed=3)) as (_endpoint, url):
        for args in (
            ("--out", "out-eval", "--runs", "2"),
            ("--triggers", "--out", "out-triggers", "--runs", "2"),
            ("--calibrate", "--out", "out-calibrate", "--runs", "2"),
            ("--model", "m-one", "--model", "m-two", "--out", "out-models", "--runs", "2"),
        ):
            done = agent_skills("eval", str(skill), *args, *common, "--record", "all",
                                "--upstream-url", url, cwd=suite)  # fmt: skip
            assert done.returncode in (0, 1), done.stderr
    repository = tmp_path / "repo"
    write_repository(repository, SKILLS)
    with word_overlap_endpoint() as (_model, url):
        matrix = agent_skills("triggers", "skills", "--record", "all", "--upstream-url", url,
                              "--model", "m", "--runs", "2", "--out", "out-matrix",
                              cwd=repository)  # fmt: skip
        assert matrix.returncode in (0, 1), matrix.stderr
        improved = agent_skills("improve-description", "skills/csv-stats", "--record", "all",
                                "--upstream-url", url, "--model", "m", "--runs", "2",
                                "--iterations", "1", "-q", cwd=repository)  # fmt: skip
        assert improved.returncode == 0, improved.stderr
    names: set[str] = set()
    for path in _written_documents(tmp_path):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(document, dict) and "$schema" in document, path
        name = document["$schema"].rpartition("/")[2].removesuffix(".schema.json")
        schema = json.loads(schema_file(name).read_text(encoding="utf-8"))
        problems = [error.message for error in Draft202012Validator(schema).iter_errors(document)]
        assert problems == [], f"{path}: {problems[:3]}"
        names.add(name)
    # Not written by these commands, and checked against their schemas where they are: the
    # skill coverage report of a pytest run of scenarios (tests/harness/test_coverage_report.py)
    # and validate's JSON report (tests/cli/test_cli.py, tests/rules/test_rules_ignores.py).
    assert set(DOCUMENTS) - {"skill-coverage", "validate"} <= names


def test_upgrade_gives_old_documents_their_schema_and_changes_nothing_else(
    tmp_path: Path,
) -> None:
    old = tmp_path / "out"
    record = old / "eval-1" / "with_skill" / "run-1.run.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"timing": {"duration_ms": 5}, "tokens": 9, "error": None},
                                 indent=2) + "\n")  # fmt: skip
    own = old / "notes" / "evals" / "evals.json"  # not a document of ours: left alone
    own.parent.mkdir(parents=True)
    own.write_text('{"skill_name": "notes", "evals": []}\n')
    done = agent_skills("schema", "--upgrade", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1 document(s) upgraded under out"
    assert json.loads(record.read_text()) == {
        "$schema": "pytest-agent-skills:schemas/run-record.schema.json",
        "timing": {"duration_ms": 5}, "tokens": 9, "error": None,
    }  # fmt: skip
    assert own.read_text() == '{"skill_name": "notes", "evals": []}\n'
    again = agent_skills("schema", "--upgrade", "out", cwd=tmp_path)
    assert again.stdout.splitlines()[-1] == "0 document(s) upgraded under out"
    (old / "benchmark.json").write_text(json.dumps({"runs": "none"}))
    refused = agent_skills("schema", "--upgrade", "out", cwd=tmp_path)
    assert refused.returncode == 2
    assert (
        'out/benchmark.json: runs: expected a list, found a string "none" (not a benchmark'
        " document)" in refused.stderr
    )
    assert "Traceback" not in refused.stderr


def test_the_example_suites_recordings_name_their_schema() -> None:
    example = Path(__file__).resolve().parents[2] / "example_suite"
    recordings = [
        path for path in example.rglob("*.json")
        if "cassettes" in path.parent.as_posix() or path.name.endswith(".run.json")
    ]  # fmt: skip
    assert len(recordings) > 100
    missing = [str(path) for path in recordings if "$schema" not in json.loads(path.read_text())]
    assert missing == [], "run: agent-skills schema --upgrade example_suite"
