"""Skill evals through real parts: the real ``openai`` client, the loopback server, the
cassettes, real workspaces, against a loopback upstream playing a seeded stochastic agent
and a grader."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_agent_skills.evals.setup.eval_options import EvalOptions
from pytest_agent_skills.evals.suite.output_folder import write_benchmark
from pytest_agent_skills.evals.suite.suite_runner import (
    EvalRequest,
    EvalSetupError,
    run_benchmark,
    run_triggers,
)
from tests.support.evals import (
    Behaviour,
    fake_endpoint,
    recording,
    replaying,
    write_eval_skill,
    written,
)
from tests.support.harness import only_loopback


def _without_timestamp(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "metadata": {**document["metadata"], "timestamp": None}}


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return write_eval_skill(tmp_path)


def _record(skill: Path, behaviour: Behaviour | None = None, **changes: Any) -> Any:
    with fake_endpoint(behaviour) as (endpoint, url):
        outcome = run_benchmark(EvalRequest(skill, recording(url, skill.parent.parent, **changes)))
    return endpoint, outcome


def test_a_recording_replays_offline_into_the_same_benchmark(
    skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, recorded = _record(skill)
    document = written(recorded.document)
    runs = document["runs"]
    assert len(runs) == 2 * 2 * 4 and not any(run["error"] for run in runs)
    # A stochastic agent: the runs of one eval and configuration do not all agree.
    rates = {run["result"]["pass_rate"] for run in runs}
    assert {0.0, 1.0} <= rates
    with_skill = [
        run["result"]["pass_rate"] for run in runs if run["configuration"] == "with_skill"
    ]
    summary = document["run_summary"]["with_skill"]["pass_rate"]
    assert summary["mean"] == round(statistics.fmean(with_skill), 4)
    assert summary["stddev"] == round(statistics.stdev(with_skill), 4)  # the sample one
    assert all(run["result"]["tokens"] > 0 for run in runs)
    assert document["run_summary"]["delta"]["pass_rate"].startswith(("+", "-"))
    assert endpoint.grader_requests == len(runs)  # one grading request a run

    with only_loopback(monkeypatch) as off_loopback:
        replayed = run_benchmark(EvalRequest(skill, replaying(skill.parent.parent)))
    assert off_loopback == []
    assert _without_timestamp(written(replayed.document)) == _without_timestamp(document)

    out = tmp_path / "out"
    write_benchmark(out, replayed.document, replayed.runs, replayed.evals)
    run_dir = out / "eval-1" / "with_skill" / "run-1"
    grading = json.loads((run_dir / "grading.json").read_text())
    assert set(grading["summary"]) == {"passed", "failed", "total", "pass_rate"}
    transcript = json.loads((run_dir / "transcript.json").read_text())
    assert transcript["messages"][0]["role"] == "system"
    assert transcript["prompt"].startswith("What is the mean")
    timing = json.loads((run_dir / "timing.json").read_text())
    assert timing["executor_duration_seconds"] == runs[0]["result"]["time_seconds"]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["total_tool_calls"] == runs[0]["result"]["tool_calls"]
    if runs[0]["result"]["tool_calls"]:
        assert json.loads((run_dir / "outputs" / "stats.json").read_text()) == {"mean": 3.0}
    assert "| with_skill |" in (out / "benchmark.md").read_text()
    assert json.loads((out / "eval-1" / "eval_metadata.json").read_text()) == {
        "$schema": "pytest-agent-skills:schemas/eval-metadata.schema.json",
        "eval_id": 1,
        "eval_name": "mean of a column",
        "prompt": "What is the mean of the value column in data.csv?",
        "assertions": [
            "The answer gives the mean the script computed",
            {"files": [{"path": "out/stats.json", "contains": "mean"}]},
        ],
    }
    # skill-creator's viewer: a folder with outputs/ is a run; it reads the prompt from
    # eval_metadata.json in that folder or the one above it.
    viewed = [folder for folder in out.rglob("outputs") if folder.is_dir()]
    assert len(viewed) == len(runs)
    for folder in viewed:
        found = [
            json.loads(place.read_text())
            for place in (
                folder.parent / "eval_metadata.json",
                folder.parent.parent / "eval_metadata.json",
            )
            if place.is_file()
        ]
        assert found and found[0]["prompt"].startswith(("What is the mean", "Tell me the average"))
    second = json.loads((out / "eval-2" / "without_skill" / "eval_metadata.json").read_text())
    assert second["assertions"] == ["The answer gives the mean the script computed"]


def test_a_changed_skill_is_a_miss_that_says_what_changed_and_how_to_re_record(
    skill: Path,
) -> None:
    _record(skill)
    skill_md = skill / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("report the mean", "report the MEAN"))
    replayed = run_benchmark(EvalRequest(skill, replaying(skill.parent.parent, runs=4)))
    with_skill = [
        run for run in written(replayed.document)["runs"] if run["configuration"] == "with_skill"
    ]
    loading = [run for run in with_skill if run["error"]]
    assert loading, "the runs that loaded the changed skill replay differently"
    message = loading[0]["error"]["message"]
    assert loading[0]["error"]["kind"] == "harness"
    assert "no match in cassette" in message and "report the MEAN" in message
    assert "agent-skills eval SKILL_DIR --record new" in message
    assert all(run["result"]["pass_rate"] == 0 for run in loading)
    without = [
        run for run in written(replayed.document)["runs"] if run["configuration"] == "without_skill"
    ]
    assert not any(run["error"] for run in without)  # the skill is not in their requests


def test_a_run_whose_cassette_cannot_be_written_is_its_harness_error(skill: Path) -> None:
    """A file of a run that cannot be written makes that run a harness error, none of its
    later files written; the other runs stand."""
    options = recording("", skill.parent.parent, runs=2, jobs=2)
    folder = options.cassette_dir("csv-stats") / "eval-1" / "with_skill"
    (folder / "run-2.json").mkdir(parents=True)  # a folder where the cassette goes
    _endpoint, outcome = _record(skill, runs=2, jobs=2)
    runs = {
        (run["eval_id"], run["configuration"], run["run_number"]): run
        for run in written(outcome.document)["runs"]
    }
    failed = runs[1, "with_skill", 2]
    assert failed["error"]["kind"] == "harness"
    assert failed["error"]["message"].startswith("the run failed unexpectedly: IsADirectoryError")
    assert failed["result"]["pass_rate"] == 0
    assert not (folder / "run-2.grader.json").exists() and not (folder / "run-2.run.json").exists()
    assert [key for key, run in runs.items() if run["error"]] == [(1, "with_skill", 2)]
    assert json.loads((folder / "run-1.json").read_text())["interactions"]
    assert (folder / "run-1.grader.json").is_file() and (folder / "run-1.run.json").is_file()


def test_rate_limits_are_waited_out(skill: Path) -> None:
    with fake_endpoint(Behaviour(rate_limited=3)) as (endpoint, url):
        # More attempts than refusals: whichever runs they hit, every run gets through.
        options = recording(url, skill.parent.parent, retry=_retry(attempts=4))
        outcome = run_benchmark(EvalRequest(skill, options))
    assert endpoint.refused == 3
    assert not any(run["error"] for run in written(outcome.document)["runs"])


def test_one_shared_kept_alive_client_serves_every_run(skill: Path) -> None:
    from pytest_agent_skills.harness import LoopbackServer
    from tests.support.evals import FakeEndpoint

    endpoint = FakeEndpoint(Behaviour())
    with LoopbackServer(endpoint) as server:
        options = recording(server.base_url, skill.parent.parent, jobs=3)
        run_benchmark(EvalRequest(skill, options))
        opened = server.connections_opened
    assert endpoint.requests > 30
    assert opened <= 3  # at most --jobs connections, each kept alive across runs


def test_the_runs_reach_the_harness_loopback_server_in_process(skill: Path) -> None:
    """The openai client of each run is answered in its own thread: no connection to the
    harness's loopback server (only to the endpoint recorded from)."""
    from pytest_agent_skills.harness.server import shared_server

    server = shared_server()
    before = (server.requests, server.connections_opened)
    _endpoint, outcome = _record(skill, runs=1)
    assert server.requests - before[0] >= len(written(outcome.document)["runs"]) * 2
    assert server.connections_opened == before[1]


def test_an_endpoint_that_keeps_refusing_is_an_error_of_each_run_never_a_pass(
    skill: Path,
) -> None:
    endpoint, outcome = _record(
        skill, Behaviour(rate_limited=10**6), runs=1, retry=_retry(attempts=2)
    )
    runs = written(outcome.document)["runs"]
    assert all(run["error"]["kind"] == "model" for run in runs)
    assert "answered HTTP 429 on each of 2 attempt(s)" in runs[0]["error"]["message"]
    assert all(run["result"]["errors"] == 1 and run["result"]["pass_rate"] == 0 for run in runs)
    assert endpoint.requests == 2 * len(runs)
    replayed = run_benchmark(EvalRequest(skill, replaying(skill.parent.parent, runs=1)))
    assert _without_timestamp(written(replayed.document)) == _without_timestamp(
        written(outcome.document)
    )


def _retry(**changes: Any) -> Any:
    from pytest_agent_skills.evals.setup.eval_options import RetryPolicy

    return RetryPolicy(base_delay=0.01, **changes)


def test_a_grader_answer_that_is_not_the_object_is_asked_again_once(skill: Path) -> None:
    endpoint, outcome = _record(skill, Behaviour(bad_gradings=1), runs=1, jobs=1)
    assert not any(run["error"] for run in written(outcome.document)["runs"])
    assert endpoint.grader_requests == len(written(outcome.document)["runs"]) + 1


def test_a_grader_that_never_answers_the_object_makes_a_grading_error_not_a_pass(
    skill: Path,
) -> None:
    endpoint, outcome = _record(skill, Behaviour(bad_gradings=-1), runs=2)
    runs = written(outcome.document)["runs"]
    assert endpoint.grader_requests == 2 * len(runs)  # asked again once, each run
    for run in runs:
        assert run["error"]["kind"] == "grading"
        assert "did not answer with the grading object, asked twice" in run["error"]["message"]
        assert run["result"]["pass_rate"] == 0 and run["result"]["errors"] == 1
        graded = [item for item in run["expectations"] if not item["text"].startswith("{")]
        assert graded and not any(item["passed"] for item in graded)
        assert graded[0]["evidence"].startswith("not graded: the run failed (grading)")
    summary = written(outcome.document)["run_summary"]
    assert summary["with_skill"]["pass_rate"]["max"] == 0
    assert any(
        "counted as errors, never as passes" in note for note in written(outcome.document)["notes"]
    )
    assert not any(verdict["meets_bar"] for verdict in written(outcome.document)["evals"])


def test_trigger_rates_are_measured_and_replayed(skill: Path) -> None:
    with fake_endpoint() as (_endpoint, url):
        options = recording(url, skill.parent.parent, runs=5)
        recorded = written(run_triggers(EvalRequest(skill, options)).document)
    should, should_not = recorded["results"]
    assert should["should_trigger"] and 0 < should["trigger_rate"] <= 1
    assert should["runs"] == 5 and should["triggers"] == round(should["trigger_rate"] * 5)
    assert should_not["trigger_rate"] == 0 and should_not["pass"]
    assert recorded["summary"]["total"] == 2
    assert recorded["description"].startswith("Computes statistics")
    replayed = run_triggers(EvalRequest(skill, replaying(skill.parent.parent, runs=5)))
    assert written(replayed.document) == recorded


def test_a_baseline_is_another_version_of_the_same_skill(skill: Path, tmp_path: Path) -> None:
    other = write_eval_skill(tmp_path / "elsewhere", description="Older words.")
    with fake_endpoint() as (_endpoint, url):
        options = recording(url, skill.parent.parent, runs=1)
        outcome = run_benchmark(EvalRequest(skill, options, baseline=other))
    assert written(outcome.document)["metadata"]["configurations"] == ["with_skill", "baseline"]
    assert {run["configuration"] for run in written(outcome.document)["runs"]} == {
        "with_skill",
        "baseline",
    }
    renamed = tmp_path / "renamed"
    (renamed / "x").mkdir(parents=True)
    (renamed / "x" / "SKILL.md").write_text("---\nname: x\ndescription: Another skill.\n---\n")
    with pytest.raises(EvalSetupError, match="not 'csv-stats'"):
        run_benchmark(EvalRequest(skill, options, baseline=renamed / "x"))


def test_cassettes_inside_the_skill_folder_are_refused(skill: Path) -> None:
    options = replaying(skill.parent.parent, cassettes=skill / "cassettes")
    with pytest.raises(EvalSetupError, match="inside the skill folder"):
        run_benchmark(EvalRequest(skill, options))


def test_request_parameters_are_sent_recorded_and_a_changed_one_is_a_miss_that_names_it(
    skill: Path,
) -> None:
    base = skill.parent.parent
    model_params = {"temperature": 0, "seed": 7, "top_k": 40}
    grader_params = {"temperature": 0, "max_tokens": 512}

    def options(make: Any, params: dict[str, Any], *args: Any) -> EvalOptions:
        built: EvalOptions = make(*args, base, runs=1, grader_params=grader_params)
        return replace(built, run=replace(built.settings, model_params=params))

    with fake_endpoint() as (endpoint, url):
        recorded = run_benchmark(
            EvalRequest(skill, options(recording, model_params, url), only=(1,))
        )
    assert not any(entry["error"] for entry in written(recorded.document)["runs"])
    agent = [body for body in endpoint.bodies if "response_format" not in body]
    graders = [body for body in endpoint.bodies if "response_format" in body]
    assert agent and graders
    # top_k is no parameter of the openai client: it reaches the endpoint all the same.
    assert all({name: body.get(name) for name in model_params} == model_params for body in agent)
    assert all("max_tokens" not in body for body in agent)
    assert all((body["temperature"], body["max_tokens"]) == (0, 512) for body in graders)
    tape = recorded_tape(options(replaying, {}), "eval-1/with_skill/run-1.json")
    assert tape["interactions"][0]["request"]["body"]["top_k"] == 40
    grader_tape = recorded_tape(options(replaying, {}), "eval-1/with_skill/run-1.grader.json")
    assert grader_tape["interactions"][0]["request"]["body"]["max_tokens"] == 512

    again = run_benchmark(EvalRequest(skill, options(replaying, model_params), only=(1,)))
    assert not any(entry["error"] for entry in written(again.document)["runs"])

    warmer = {**model_params, "temperature": 0.5}
    missed = run_benchmark(EvalRequest(skill, options(replaying, warmer), only=(1,)))
    message = written(missed.document)["runs"][0]["error"]["message"]
    assert "no match in cassette" in message
    assert "Request fields differ from the recording: temperature (recorded 0, now 0.5)" in message


def recorded_tape(options: EvalOptions, name: str) -> Any:
    return json.loads((options.cassette_dir("csv-stats") / name).read_text())
