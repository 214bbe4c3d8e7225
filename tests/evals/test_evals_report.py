"""report.html from eval output folders written by hand: its figures, its escaping, its limits,
and the errors for a folder it cannot read. The page as a browser shows it is tested in
test_evals_report_browser.py."""

from __future__ import annotations

import json
import os
import re
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from bench.support.evals_report import (
    MEAN_EVAL,
    SUMMARY_EVAL,
    Errored,
    EvalCase,
    hostile_case,
    random_case,
    write_benchmark,
    write_triggers,
)
from pytest_agent_skills.errors import AgentSkillsError
from pytest_agent_skills.evals.documents.document_io import DocumentError
from pytest_agent_skills.evals.documents.upgrade import upgrade
from pytest_agent_skills.evals.report import folder as report_input
from pytest_agent_skills.evals.report.write import write_report

HOSTILE = (
    '</script><script>window.__pwned = 1</script><img src="http://127.0.0.1:9/x.png">'
    "<!-- <b>bold</b> ]]> & &amp;"
)

INLINE = frozenset({"a", "span", "strong", "code", "q", "em", "b"})


class Page(HTMLParser):
    """The tags, attributes and text of a page, and the text inside each element with an id."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[tuple[str, str | None, list[str]]] = []
        self.feed(source)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in INLINE and self._open:
            self._open[-1][2].append(" ")
        if tag not in {"meta", "input", "br", "img", "link"}:
            self._open.append((tag, dict(attrs).get("id"), []))

    def handle_endtag(self, tag: str) -> None:
        if tag not in INLINE and self._open:
            self._open[-1][2].append(" ")  # as a browser's innerText breaks after a block
        while self._open:
            name, element_id, parts = self._open.pop()
            if element_id:
                self.text_by_id[element_id] = "".join(parts)
            if self._open:
                self._open[-1][2].extend(parts)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][2].append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def render(out_dir: Path) -> tuple[str, Page]:
    source = write_report(out_dir).read_text(encoding="utf-8")
    return source, Page(source)


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "evals-out"
    folder.mkdir()
    return folder


def test_the_figures_per_eval_and_configuration_with_their_spread(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL, SUMMARY_EVAL])
    _, page = render(out_dir)
    # eval 1: with_skill met 3/3, 3/3, 2/3; without_skill 1/3, 0/3 and a model error (0).
    assert squash(page.text_by_id["summary-with_skill"]).startswith(
        "with_skill 94% ± 14 min-max 67–100% over 6 runs"
    )
    assert "1 errored run (counted as failed)" in page.text_by_id["summary-without_skill"]
    table = squash(page.text_by_id["eval-table"])
    assert "1. mean of a column with_skill 89% ± 19 67–100% 2/3 0 " in table
    assert "without_skill 11% ± 19 0–33% 0/3 1 " in table
    assert "2. summary file with_skill 100% ± 0 100–100% 3/3 0 " in table
    assert "without_skill 67% ± 29 50–100% 1/3 0 11.0 s 1,100 +0.33" in table
    chart = page.text_by_id["pass-rate-chart"]
    assert "89% ± 19 (67–100%, n=3)" in chart
    assert "11% ± 19 (0–33%, n=3, 1 error)" in chart


def test_a_run_that_errored_with_every_expectation_met_is_an_error_not_a_pass(
    out_dir: Path,
) -> None:
    # A harness error after grading: the file says 2/2 expectations met, yet the run errored.
    case = EvalCase(
        3,
        "errored after grading",
        "Summarise data.csv",
        ("A", "B"),
        {"with_skill": (2, Errored("harness", "workspace removal failed")), "without_skill": (0,)},
    )
    write_benchmark(out_dir, [case])
    benchmark = json.loads((out_dir / "benchmark.json").read_text())
    errored = benchmark["runs"][1]
    errored["result"].update(pass_rate=1.0, passed=2, failed=0)  # as a careless writer might
    (out_dir / "benchmark.json").write_text(json.dumps(benchmark))
    _, page = render(out_dir)
    table = squash(page.text_by_id["eval-table"])
    assert "with_skill 50% ± 71 0–100% 1/2 1 " in table
    assert squash(page.text_by_id["errors"]).startswith("Errors (1)")
    assert "harness workspace removal failed" in squash(page.text_by_id["errors"])
    run = page.text_by_id["run-3-with_skill-2"]
    assert squash(run).startswith("error: harness run 2")


def test_failing_expectations_list_their_evidence_and_the_runs_that_gave_it(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    _, page = render(out_dir)
    failing = squash(page.text_by_id["failing"])
    assert (
        "✘ out/stats.json exists failed in 1/3 with_skill, 2/2 without_skill "
        "skill_run printed mean 4.2 but the final answer gives 4.0. with_skill #3 "
        "The answer says 'about 5' but the data's mean is 4.2; no script was run. "
        "without_skill #1 #2"
    ) in failing
    links = {attrs["href"] for attrs in page.all("a") if attrs.get("class") == "run-link"}
    assert {"#run-1-with_skill-3", "#run-1-without_skill-1", "#run-1-without_skill-2"} <= links


def test_each_run_carries_its_transcript_tool_calls_and_output_files(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    _, page = render(out_dir)
    run = squash(page.text_by_id["run-1-with_skill-1"])
    assert "Transcript (2 tool calls)" in run
    assert 'tool call skill_run arguments { "skill": "csv-stats", "command": "python3' in run
    assert '"exit_code": 0' in run  # the result of the call
    assert "final answer The mean of the value column is 4.2" in run
    assert 'stats.json 57 bytes text {"column": "value", "mean": 4.2' in run
    assert "plots/histogram.png 272 bytes, binary" in run
    # the first expectation met, with its evidence
    assert "✔ The answer gives the mean the script computed Transcript shows it" in run


def test_the_page_asks_for_nothing_outside_itself(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL, SUMMARY_EVAL])
    write_triggers(out_dir)
    source, page = render(out_dir)
    tags = {name for name, _ in page.tags}
    assert not tags & {"link", "img", "iframe", "object", "embed", "video", "audio", "base", "form"}
    assert [attrs for attrs in page.all("script") if attrs] == []  # inline, no src
    assert len(page.all("script")) == 1
    sources = [value for _, attrs in page.tags for key, value in attrs.items() if key == "src"]
    assert sources == []
    for attrs in page.all("a"):
        href = attrs["href"] or ""
        assert href.startswith("#") or not re.match(r"[a-z]+:", href), href
    policy = next(a for a in page.all("meta") if a.get("http-equiv") == "Content-Security-Policy")
    assert str(policy["content"]).startswith("default-src 'none'; style-src 'sha256-")
    assert "url(" not in source and "@import" not in source and "@font-face" not in source


def test_model_supplied_text_is_shown_never_parsed(out_dir: Path) -> None:
    write_benchmark(out_dir, [hostile_case(HOSTILE)], skill_name=f"skill {HOSTILE}")
    benchmark = json.loads((out_dir / "benchmark.json").read_text())
    benchmark["notes"] = [f"note {HOSTILE}"]
    benchmark["runs"][0]["error"] = {"kind": "model", "message": f"message {HOSTILE}"}
    (out_dir / "benchmark.json").write_text(json.dumps(benchmark))
    source, page = render(out_dir)
    assert len(page.all("script")) == 1 and page.all("img") == []
    assert "window.__pwned" not in source.split("<script>")[-1]
    run = page.text_by_id["run-1-with_skill-1"]
    for label in ("final", "result", "file", "expectation", "message"):
        assert f"{label} {HOSTILE}" in run, label
    for element_id in ("summary", "failing", "errors"):
        assert HOSTILE in page.text_by_id[element_id], element_id


def test_triggers_alone(out_dir: Path) -> None:
    write_triggers(out_dir)
    _, page = render(out_dir)
    triggers = squash(page.text_by_id["triggers"])
    assert triggers.startswith(
        "Triggers 2 of 5 queries pass; 3 fail (qwen2.5-7b-instruct, threshold 0.5). "
        "Statistics of CSV columns"
    )
    assert "what's the average of the price column in sales.csv yes 3/3 0 100% pass" in triggers
    assert "compute summary statistics for measurements.csv yes 1/3 0 33% fail" in triggers
    assert "convert this csv to json no 2/3 0 67% fail" in triggers
    assert (
        "total the invoices in q3.csv upstream answered 429 four times yes 2/3 1 67% fail"
    ) in triggers
    assert "summary" not in page.text_by_id and "runs" not in page.text_by_id


def test_benchmark_and_triggers_together(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    write_triggers(out_dir)
    _, page = render(out_dir)
    assert {"summary", "failing", "errors", "runs", "triggers"} <= set(page.text_by_id)


def test_output_files_are_inlined_up_to_a_limit(out_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("a secret the page must not carry")
    big = "x" * (report_input.OUTPUT_TEXT_LIMIT + 500)
    case = EvalCase(
        1,
        "files",
        "Make files",
        ("A",),
        {"with_skill": (1,)},
        outputs={
            "big.txt": big.encode(),
            "blob.bin": b"\x00\x01" * 50,
            "utf8.txt": ("é" * 10 + "\n").encode(),
        },
    )
    write_benchmark(out_dir, [case])
    (out_dir / "eval-1/with_skill/run-1/outputs/link.txt").symlink_to(secret)
    source, page = render(out_dir)
    run = squash(page.text_by_id["run-1-with_skill-1"])
    assert (
        f"big.txt 20.0 KiB text (first {report_input.OUTPUT_TEXT_LIMIT:,} characters shown)" in run
    )
    assert "x" * report_input.OUTPUT_TEXT_LIMIT in source
    assert "x" * (report_input.OUTPUT_TEXT_LIMIT + 1) not in source
    assert "blob.bin 100 bytes, binary" in run
    assert f"link.txt symlink to {secret} (not followed)" in run
    assert "a secret the page must not carry" not in source
    assert "utf8.txt 21 bytes text " + "é" * 10 in run


def test_a_page_of_many_runs_stays_within_its_output_budget(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_input, "OUTPUTS_BUDGET", 30_000)
    case = EvalCase(
        1,
        "many files",
        "Make files",
        ("A",),
        {"with_skill": (1,) * 4},
        outputs={"report.txt": b"y" * 15_000},
    )
    write_benchmark(out_dir, [case])
    source, page = render(out_dir)
    assert source.count("y" * 15_000) == 2
    run = squash(page.text_by_id["run-1-with_skill-4"])
    assert "report.txt 14.6 KiB, not shown: the page's size budget is spent" in run


def test_two_evals_by_three_configurations_by_ten_runs(out_dir: Path) -> None:
    configurations = ("with_skill", "without_skill", "baseline")
    cases = [random_case(1, configurations, 10, seed=1), random_case(2, configurations, 10, seed=2)]
    benchmark = write_benchmark(out_dir, cases)
    started = time.perf_counter()
    source, page = render(out_dir)
    print(f"60 runs rendered in {time.perf_counter() - started:.3f} s, {len(source):,} characters")
    runs = [attrs for attrs in page.all("details") if "run" in str(attrs.get("class")).split()]
    assert len(runs) == 60
    assert len([a for a in page.all("g") if "chart-row" in str(a.get("class"))]) == 3 * 3
    assert len(source) < 600_000
    for name in configurations:
        recorded = benchmark["run_summary"][name]["pass_rate"]
        shown = f"{recorded['mean'] * 100:.0f}% ± {recorded['stddev'] * 100:.0f}"
        assert squash(page.text_by_id[f"summary-{name}"]).startswith(f"{name} {shown}")


def test_the_report_is_replaced_whole(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    (out_dir / "report.html").write_text("old page")
    target = write_report(out_dir)
    assert target == out_dir / "report.html"
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert not [name for name in os.listdir(out_dir) if name.startswith(".report.html")]


def _broken(out_dir: Path, path: str, text: str) -> DocumentError:
    (out_dir / "report.html").write_text("the last good page")
    (out_dir / path).write_text(text)
    with pytest.raises(DocumentError) as caught:
        write_report(out_dir)
    assert (out_dir / "report.html").read_text() == "the last good page"
    assert not [name for name in os.listdir(out_dir) if name.startswith(".report.html")]
    return caught.value


def _edited(out_dir: Path, edit: Any) -> str:
    benchmark = json.loads((out_dir / "benchmark.json").read_text())
    edit(benchmark)
    return json.dumps(benchmark, indent=1)


def test_bad_json_names_the_file_and_line(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    error = _broken(out_dir, "benchmark.json", '{\n  "runs": [\n    {"eval_id": 1}\n    {}\n  ]\n}')
    assert str(error) == (
        f"{out_dir}/benchmark.json:4: is not valid JSON: Expecting ',' delimiter (column 5)"
    )
    assert isinstance(error, AgentSkillsError) and error.line == 4


def test_a_transcript_that_is_not_json_names_its_file(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    error = _broken(out_dir, "eval-1/with_skill/run-2/transcript.json", '{"messages": [}')
    assert str(error) == (
        f"{out_dir}/eval-1/with_skill/run-2/transcript.json:1: is not valid JSON: "
        "Expecting value (column 15)"
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda b: b["runs"][2]["result"].update(pass_rate="high"),
            'runs[2].result.pass_rate: expected a number, found a string "high"'
            " (not a benchmark document)",
        ),
        (
            lambda b: b["runs"][0].pop("eval_id"),
            "runs[0].eval_id: expected an integer (the field is required), found nothing"
            " (not a benchmark document)",
        ),
        (
            lambda b: b["runs"][1].update(run_dir="../../etc"),
            "runs[1].run_dir: '../../etc' is not a folder inside the output folder",
        ),
        (
            lambda b: b["runs"][0].update(configuration="with skill/.."),
            "runs[0].configuration: expected a name matching ^[A-Za-z0-9][A-Za-z0-9_.-]*$,"
            ' found a string "with skill/.." (not a benchmark document)',
        ),
        (
            lambda b: b["runs"][0].update(error={"kind": "timeout", "message": "slow"}),
            "runs[0].error.kind: expected one of 'model', 'grading', 'harness' or"
            " 'interrupted', found a string \"timeout\" (not a benchmark document)",
        ),
        (
            lambda b: b["runs"][1].update(run_number=1),
            "runs[1]: eval 1 with_skill run 1 is listed twice (first at runs[0])",
        ),
        (
            lambda b: b["runs"][0]["expectations"][0].update(passed="yes"),
            'runs[0].expectations[0].passed: expected true or false, found a string "yes"'
            " (not a benchmark document)",
        ),
        (
            lambda b: b.update(runs={}),
            "runs: expected a list, found an object (not a benchmark document)",
        ),
    ],
)
def test_a_field_of_the_wrong_shape_names_its_path(out_dir: Path, edit: Any, message: str) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    error = _broken(out_dir, "benchmark.json", _edited(out_dir, edit))
    assert str(error) == f"{out_dir}/benchmark.json: {message}"


def test_a_folder_written_before_schema_reads_as_the_same_page_after_its_upgrade(
    out_dir: Path,
) -> None:
    write_benchmark(out_dir, [MEAN_EVAL, SUMMARY_EVAL])
    write_triggers(out_dir)
    before, _ = render(out_dir)
    upgraded = upgrade(out_dir)
    assert {path.name for path in upgraded} >= {"benchmark.json", "triggers.json", "grading.json"}
    after, _ = render(out_dir)
    assert after == before


def test_a_truncated_benchmark_names_the_line_where_it_ends(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    text = (out_dir / "benchmark.json").read_text()
    cut = text[: len(text) // 2]
    error = _broken(out_dir, "benchmark.json", cut)
    assert str(error).startswith(f"{out_dir}/benchmark.json:{cut.count(chr(10)) + 1}: ")
    assert "is not valid JSON" in str(error)


@pytest.mark.parametrize(
    ("path", "edit", "message"),
    [
        (
            "benchmark.json",
            lambda d: d["run_summary"]["with_skill"]["pass_rate"].update(mean="high"),
            'run_summary.with_skill.pass_rate.mean: expected a number, found a string "high"'
            " (not a benchmark document)",
        ),
        (
            "benchmark.json",
            lambda d: d["runs"][0]["result"].update(verdict="pass"),
            'runs[0].result.verdict: expected no such field, found a string "pass"'
            " (not a benchmark document)",
        ),
        (
            "eval-1/with_skill/run-1/transcript.json",
            lambda d: d["messages"][2]["tool_calls"][0]["function"].pop("name"),
            "messages[2].tool_calls[0].function.name: expected a string (the field is"
            " required), found nothing (not a transcript document)",
        ),
        (
            "eval-1/with_skill/run-1/transcript.json",
            lambda d: d["messages"][1].update(content=7),
            "messages[1].content: expected a string, found a number 7 (not a transcript document)",
        ),
    ],
)
def test_a_hand_edited_document_names_its_file_path_and_both_kinds(
    out_dir: Path, path: str, edit: Any, message: str
) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    document = json.loads((out_dir / path).read_text())
    edit(document)
    error = _broken(out_dir, path, json.dumps(document))
    assert str(error) == f"{out_dir}/{path}: {message}"


def test_a_folder_without_results(out_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as caught:
        write_report(out_dir)
    assert str(caught.value) == (
        f"{out_dir}: holds neither benchmark.json nor triggers.json: run `agent-skills eval` "
        "with --out pointing here first"
    )
    with pytest.raises(DocumentError, match=r"missing: is not a folder \(the eval output folder"):
        write_report(tmp_path / "missing")


def test_triggers_of_the_wrong_shape(out_dir: Path) -> None:
    write_triggers(out_dir)
    triggers = json.loads((out_dir / "triggers.json").read_text())
    del triggers["results"][1]["should_trigger"]
    error = _broken(out_dir, "triggers.json", json.dumps(triggers))
    assert str(error) == (
        f"{out_dir}/triggers.json: results[1].should_trigger: expected true or false (the field"
        " is required), found nothing (not a trigger-results document)"
    )


def test_a_run_without_its_folder_is_shown_as_missing(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    interrupted = out_dir / "eval-1/without_skill/run-3"
    for path in sorted(interrupted.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    interrupted.rmdir()
    _, page = render(out_dir)
    run = squash(page.text_by_id["run-1-without_skill-3"])
    assert "error: model run 3" in run
    assert "no transcript recorded in eval-1/without_skill/run-3 (no run folder)" in run


def test_long_transcripts_are_cut_to_size(out_dir: Path) -> None:
    from pytest_agent_skills.evals.report import runs_section as report_page

    case = EvalCase(1, "long", "Go", ("A",), {"with_skill": (1,)}, tool_result="r" * 70_000)
    write_benchmark(out_dir, [case])
    transcript_file = out_dir / "eval-1/with_skill/run-1/transcript.json"
    transcript = json.loads(transcript_file.read_text())
    calls = [m for m in transcript["messages"] if m["role"] == "tool"]
    for index, message in enumerate(calls):
        message["content"] = f"{index}" * 70_000
    transcript["messages"] = transcript["messages"][:-1] * 5 + transcript["messages"][-1:]
    transcript_file.write_text(json.dumps(transcript))
    source, page = render(out_dir)
    run = squash(page.text_by_id["run-1-with_skill-1"])
    limit, whole = report_page.TRANSCRIPT_TEXT_LIMIT, report_page.RUN_TRANSCRIPT_LIMIT
    assert f"… {70_000 - limit:,} more characters (all of them in transcript.json)" in run
    cut = [int(more.replace(",", "")) for more in re.findall(r"… ([\d,]+) more characters", run)]
    results = [more for more in cut if more <= 70_000 and more >= 70_000 - limit]
    assert len(results) == 10  # each cut; past the run's limit, shown not at all
    assert whole - 2_000 < sum(70_000 - more for more in results) <= whole  # prompts take some
    assert results[-1] == 70_000
    assert "final answer The mean of the value column is 4.2" in run
    assert len(source) < 200_000


def test_a_benchmark_without_summary_or_run_folders_named_is_computed_from_its_runs(
    out_dir: Path,
) -> None:
    # skill-creator's own benchmark.json may carry neither run_summary nor run_dir.
    write_benchmark(out_dir, [MEAN_EVAL, SUMMARY_EVAL])
    _, recorded = render(out_dir)
    benchmark = json.loads((out_dir / "benchmark.json").read_text())
    del benchmark["run_summary"]
    for run in benchmark["runs"]:
        del run["run_dir"], run["error"], run["notes"]
        run["result"] = {key: run["result"][key] for key in ("pass_rate", "passed", "total")}
    benchmark["runs"][5]["result"]["errors"] = 1  # the model error, counted without its object
    (out_dir / "benchmark.json").write_text(json.dumps(benchmark))
    _, page = render(out_dir)
    for name in ("with_skill", "without_skill"):
        card, again = (squash(p.text_by_id[f"summary-{name}"]) for p in (recorded, page))
        assert again.split(" over ")[0] == card.split(" over ")[0]
    assert "Transcript (2 tool calls)" in page.text_by_id["run-1-with_skill-1"]
    assert squash(page.text_by_id["run-1-without_skill-3"]).startswith("error: model run 3")


def test_a_file_that_is_not_utf8(out_dir: Path) -> None:
    write_triggers(out_dir)
    (out_dir / "triggers.json").write_bytes(b'{\n "skill_name": "caf\xe9"\n}')
    with pytest.raises(DocumentError) as caught:
        write_report(out_dir)
    assert str(caught.value) == f"{out_dir}/triggers.json:2: is not UTF-8 text"


def test_expectations_come_from_grading_json_when_benchmark_json_has_none(out_dir: Path) -> None:
    write_benchmark(out_dir, [MEAN_EVAL])
    benchmark = json.loads((out_dir / "benchmark.json").read_text())
    for run in benchmark["runs"]:
        del run["expectations"]
    (out_dir / "benchmark.json").write_text(json.dumps(benchmark))
    _, page = render(out_dir)
    run = squash(page.text_by_id["run-1-with_skill-3"])
    assert (
        "✘ out/stats.json exists skill_run printed mean 4.2 but the final answer gives 4.0." in run
    )
    assert "out/stats.json exists failed in 1/3 with_skill" in squash(page.text_by_id["failing"])
    (out_dir / "eval-1/with_skill/run-2/grading.json").write_text("{")
    with pytest.raises(DocumentError, match=r"run-2/grading.json:1: is not valid JSON"):
        write_report(out_dir)
