"""The evidence fields of benchmark.json through the real harness (loopback upstream, real
client, cassettes): intervals against scipy, verdicts, the runs hint, flaky expectations,
errored runs left out and counted, one run, and the ``better`` gate (CLI and pytest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy import stats as oracle

from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from pytest_agent_skills.evals.verdicts.benchmark_md import benchmark_markdown
from tests.support.evals import (
    EXPECTATIONS,
    NOISY_EVALS,
    Behaviour,
    fake_endpoint,
    grading_stream,
    recording,
    replaying,
    simulated_pass_rates,
    write_eval_skill,
    written,
)

pytest_plugins = ["pytester"]


def _record(skill: Path, behaviour: Behaviour, only: tuple[int, ...] = (), **changes: Any) -> Any:
    with fake_endpoint(behaviour) as (endpoint, url):
        options = recording(url, skill.parent.parent, **changes)
        outcome = run_benchmark(EvalRequest(skill, options, only=only))
    return endpoint, outcome


def _rates(document: dict[str, Any], eval_id: int, configuration: str) -> list[float]:
    return [
        run["result"]["pass_rate"]
        for run in document["runs"]
        if run["eval_id"] == eval_id and run["configuration"] == configuration
    ]


def test_intervals_and_verdicts_of_the_seeded_grader_are_scipys(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path, evals=NOISY_EVALS)
    behaviour = Behaviour(seed=5, grader_pass=0.6)
    _, outcome = _record(skill, behaviour, runs=5, jobs=1)
    document = written(outcome.document)
    for verdict in document["evals"]:
        eval_id = verdict["eval_id"]
        prompt = f"Noisy question {eval_id}?"
        # One run after the other (jobs=1): the harness's runs are the model's draws.
        drawn = simulated_pass_rates(behaviour, prompt, 10, 3)
        first, second = drawn[:5], drawn[5:]
        recorded = _rates(document, eval_id, "with_skill") + _rates(
            document, eval_id, "without_skill"
        )
        assert recorded == pytest.approx(drawn, abs=1e-4)
        assert set(first) - {0.0, 1.0} and set(second) - {0.0, 1.0}  # not pass/fail runs
        welch = oracle.ttest_ind(first, second, equal_var=False).confidence_interval(0.95)
        low, high = verdict["delta_ci95"]
        assert (low, high) == pytest.approx((max(-1, welch.low), min(1, welch.high)), abs=1e-4)
        expected = "inconclusive" if low <= 0 <= high else "better" if low > 0 else "worse"
        assert verdict["verdict"] == expected
        mean = oracle.t.interval(0.95, 4, loc=sum(first) / 5, scale=oracle.sem(first))
        assert verdict["pass_rate"]["with_skill"]["ci95"] == pytest.approx(
            [max(0, mean[0]), min(1, mean[1])], abs=1e-4
        )
        assert isinstance(verdict["runs_for_0_10"], int) and verdict["runs_for_0_10"] > 5
        # Flaky: every expectation passing in some runs of a configuration and failing in others.
        for configuration in ("with_skill", "without_skill"):
            for text in EXPECTATIONS:
                outcomes = [
                    item["passed"]
                    for run in document["runs"]
                    if run["eval_id"] == eval_id and run["configuration"] == configuration
                    for item in run["expectations"]
                    if item["text"] == text
                ]
                listed = [
                    item
                    for item in verdict["flaky"]
                    if item["text"] == text and item["configuration"] == configuration
                ]
                if 0 < sum(outcomes) < len(outcomes):
                    assert listed == [
                        {"text": text, "configuration": configuration,
                         "passed": sum(outcomes), "runs": 5}
                    ]  # fmt: skip
                else:
                    assert listed == []
    summary = document["run_summary"]["with_skill"]
    met = sum(
        1
        for run in document["runs"]
        if run["configuration"] == "with_skill" and run["result"]["pass_rate"] == 1.0
    )
    wilson = oracle.binomtest(met, 15).proportion_ci(0.95, method="wilson")
    assert summary["all_met_ci95"] == pytest.approx([wilson.low, wilson.high], abs=1e-4)
    low, high = summary["pass_rate"]["ci95"]
    assert low < summary["pass_rate"]["mean"] < high
    assert summary["pass_rate"]["runs_counted"] == 15
    assert document["overall"]["verdict"] in ("better", "worse", "inconclusive")
    # skill-creator's fields keep their shape.
    assert set(summary["pass_rate"]) >= {"mean", "stddev", "min", "max"}
    assert document["run_summary"]["delta"]["pass_rate"].startswith(("+", "-"))
    text = benchmark_markdown(outcome.document)
    first_eval = document["evals"][0]
    assert f"[{first_eval['delta_ci95'][0]:+.2f}, {first_eval['delta_ci95'][1]:+.2f}]" in text
    assert f"| {first_eval['verdict']} |" in text
    assert "Flaky expectations (pass in some runs of a configuration, fail in others):" in text
    assert "| 1 | with_skill | The answer names the mean |" in text


def test_an_errored_run_is_left_out_of_the_intervals_and_counted(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path, evals=NOISY_EVALS)
    # The first run's grader answers badly twice: a grading error, never a pass.
    _, outcome = _record(
        skill, Behaviour(seed=5, grader_pass=0.6, bad_gradings=2), runs=5, jobs=1, only=(1,)
    )
    document = written(outcome.document)
    verdict = next(item for item in document["evals"] if item["eval_id"] == 1)
    errored = [run for run in document["runs"] if run["error"]]
    assert [(run["eval_id"], run["configuration"], run["run_number"]) for run in errored] == [
        (1, "with_skill", 1)
    ]
    assert verdict["runs_counted"] == {"with_skill": 4, "without_skill": 5}
    assert verdict["runs_excluded"]["with_skill"] == {"errors": 1, "skipped": 0}
    graded = [
        run["result"]["pass_rate"]
        for run in document["runs"]
        if run["eval_id"] == 1 and run["configuration"] == "with_skill" and not run["error"]
    ]
    assert len(graded) == 4
    if len(set(graded)) > 1 and set(graded) - {0.0, 1.0}:
        mean = oracle.t.interval(0.95, 3, loc=sum(graded) / 4, scale=oracle.sem(graded))
        assert verdict["pass_rate"]["with_skill"]["ci95"] == pytest.approx(
            [max(0, mean[0]), min(1, mean[1])], abs=1e-4
        )
    assert document["run_summary"]["with_skill"]["pass_rate"]["runs_excluded"]["errors"] == 1


def test_one_run_has_no_interval_and_says_so(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    _, outcome = _record(skill, Behaviour(), runs=1)
    document = written(outcome.document)
    for verdict in document["evals"]:
        assert verdict["delta_ci95"] is None and verdict["runs_for_0_10"] is None
        assert verdict["verdict"] == "inconclusive"
        assert verdict["verdict_note"] == (
            "no interval: with_skill has 1 graded run(s), without_skill has 1 graded run(s);"
            " an interval needs 2 or more per configuration"
        )
        assert verdict["pass_rate"]["with_skill"]["ci95"] is None
    assert document["run_summary"]["with_skill"]["pass_rate"]["ci95"] is None
    assert "(no interval)" in benchmark_markdown(outcome.document)


def test_require_better_passes_a_clear_effect_and_fails_noise_with_the_interval(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    _, clear = _record(
        skill, Behaviour(uses_skill=1.0, lucky_guess=0.0), runs=4, require="better",
        min_pass_rate=0.0,
    )  # fmt: skip
    for verdict in written(clear.document)["evals"]:
        # 4 of 4 runs against 0 of 4: Newcombe's interval of +1.00 lies above 0.
        assert verdict["delta_ci95"][0] > 0 and verdict["verdict"] == "better"
        assert verdict["meets_bar"], verdict["problems"]
    noisy = write_eval_skill(tmp_path / "noisy", evals=NOISY_EVALS)
    _, same = _record(
        noisy, Behaviour(seed=5, grader_pass=0.6), runs=3, jobs=1, require="better",
        min_pass_rate=0.0, only=(1,),
    )  # fmt: skip
    verdict = written(same.document)["evals"][0]
    assert verdict["verdict"] == "inconclusive" and not verdict["meets_bar"]
    low, high = verdict["delta_ci95"]
    needed = verdict["runs_for_0_10"]
    assert verdict["problems"] == [
        f"--require better: the verdict is inconclusive, not better (with_skill - without_skill"
        f" 95% interval [{low:+.2f}, {high:+.2f}]: its interval contains 0); {needed} runs per"
        f" configuration would bring the interval to ±0.10 at the spread observed"
        f" (--runs {needed})"
    ]


def test_a_pytest_item_failing_require_better_prints_the_interval_and_the_hint(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_eval_skill(pytester.path, evals=NOISY_EVALS)
    pytester.makefile(
        ".toml",
        pyproject='[tool.pytest.ini_options]\nskills_model = "fake-agent"\nskills_eval_runs = 3\n'
        'skills_eval_min_pass_rate = 0\nskills_eval_jobs = 1\nskills_eval_runtime = "local"\n'
        'skills_grader_model = "fake-grader"\n',  # a judge apart: --require better asks it
    )
    with fake_endpoint(Behaviour(seed=5, grader_pass=0.6)) as (_endpoint, url):
        recorded = pytester.runpytest_subprocess(
            "skills/csv-stats/evals", "--skills-record=all", f"--skills-upstream-url={url}",
            "-p", "no:cacheprovider", "-k", "eval and 1",
        )  # fmt: skip
    assert recorded.ret == 0
    gated = pytester.runpytest_subprocess(
        "skills/csv-stats/evals", "-p", "no:cacheprovider", "-k", "eval and 1",
        "--skills-eval-require=better",
    )  # fmt: skip
    gated.stdout.fnmatch_lines(
        [
            "*eval 1 (noisy 1) is below its bar: --require better: the verdict is inconclusive,"
            " not better (with_skill - without_skill 95% interval [[]*, *[]]: its interval"
            " contains 0); * runs per configuration would bring the interval to ±0.10 at the"
            " spread observed (--runs *)",
            "delta *, 95% interval [[]*, *[]]: inconclusive; * runs per configuration *",
        ]
    )
    assert gated.ret == 1
    monkeypatch.setenv("SKILLS_EVAL_REQUIRE", "better")
    by_env = pytester.runpytest_subprocess(
        "skills/csv-stats/evals", "-p", "no:cacheprovider", "-k", "eval and 1"
    )
    assert by_env.ret == 1
    monkeypatch.setenv("SKILLS_EVAL_REQUIRE", "best")
    wrong = pytester.runpytest_subprocess("skills/csv-stats/evals", "-p", "no:cacheprovider")
    assert wrong.ret == 4
    wrong.stderr.fnmatch_lines(
        ["*invalid choice 'best' for --skills-eval-require (choose from none, better)*"]
    )


def test_grader_runs_report_the_graders_agreement_and_never_average_a_split(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path, evals=NOISY_EVALS)
    behaviour = Behaviour(seed=11, grader_pass=0.6)
    endpoint, outcome = _record(skill, behaviour, runs=3, jobs=1, only=(1,), grader_runs=3)
    assert endpoint.grader_requests == 2 * 3 * 3  # every run of both configurations, 3 times
    document = written(outcome.document)
    # The seeded grader's draws, one after the other: configuration, run, grading, expectation.
    stream = grading_stream(behaviour, "Noisy question 1?")
    draws = [[[[stream.random() < 0.6 for _ in EXPECTATIONS] for _ in range(3)] for _ in range(3)]
             for _ in range(2)]  # fmt: skip
    splits = []
    for run in document["runs"]:
        gradings = draws[("with_skill", "without_skill").index(run["configuration"])][
            run["run_number"] - 1
        ]
        for index, item in enumerate(run["expectations"]):
            passed = sum(grading[index] for grading in gradings)
            assert item["grader_agreement"] == {
                "passed": passed, "gradings": 3, "agreement": round(max(passed, 3 - passed) / 3, 4)
            }  # fmt: skip
            if 0 < passed < 3:
                assert item["passed"] is False
                assert item["evidence"].startswith(
                    f"grader split: {passed} of 3 gradings passed it (a split is never a pass);"
                )
                splits.append(
                    {"text": item["text"], "configuration": run["configuration"],
                     "run_number": run["run_number"], "passed": passed, "gradings": 3}
                )  # fmt: skip
            else:
                assert item["passed"] is (passed == 3)
    assert splits and document["evals"][0]["grader_disagreements"] == splits
    cassettes = tmp_path / "eval-cassettes" / "csv-stats" / "eval-1" / "with_skill"
    assert {path.name for path in cassettes.glob("run-1.grader*.json")} == {
        "run-1.grader.json", "run-1.grader-2.json", "run-1.grader-3.json"
    }  # fmt: skip
    text = benchmark_markdown(outcome.document)
    assert "Grader disagreements (the gradings of one run split; never counted as a pass):" in text
    replayed = run_benchmark(
        EvalRequest(skill, replaying(tmp_path, runs=3, grader_runs=3), only=(1,))
    )
    assert {**written(replayed.document), "metadata": None} == {**document, "metadata": None}
    from pytest_agent_skills.evals.report.write import write_report
    from pytest_agent_skills.evals.suite.output_folder import write_benchmark

    write_benchmark(tmp_path / "out", outcome.document, outcome.runs)
    page = write_report(tmp_path / "out").read_text()
    assert page.count('class="split-row"') == len(splits)
