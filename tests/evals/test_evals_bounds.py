"""What an eval run writes beside its workspace is bounded, and a bound that is hit is a note
of the run (or its error), never a silent cut: outputs/, transcript.json, the cassette."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_agent_skills.evals.run.bounds import TRANSCRIPT_CAP_BYTES
from pytest_agent_skills.evals.suite.output_folder import write_benchmark
from pytest_agent_skills.evals.suite.suite_runner import EvalRequest, run_benchmark
from pytest_agent_skills.harness import Upstream
from pytest_agent_skills.harness.cassette import MAX_CASSETTE_BYTES
from tests.support.evals import CommandAgent, command_agent, recording, write_eval_skill

MIB = 1024 * 1024


def _with_skill(outcome: Any) -> Any:
    return next(run for run in outcome.runs if run.key.configuration == "with_skill")


def test_outputs_keep_100_files_and_name_the_bounds_hit(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    command = (
        "mkdir -p out; for i in $(seq 1 120); do echo $i > out/f$i.txt; done;"
        " head -c 2097152 /dev/zero > out/big.bin"
    )
    with command_agent(CommandAgent("csv-stats", command)) as url:
        outcome = run_benchmark(EvalRequest(skill, recording(url, tmp_path, runs=1), only=(1,)))
    run = _with_skill(outcome)
    assert run.error is None
    assert len(run.outputs) == 100 and len(run.outputs["big.bin"]) == MIB
    left_out = sorted(["big.bin", *(f"f{number}.txt" for number in range(1, 121))])[100:]
    assert list(run.notes) == [
        "outputs/big.bin: kept its first 1048576 bytes, the limit of a file captured from the"
        " workspace (1 MiB)",
        f"outputs/: 21 of the 121 files of out/ left out ({', '.join(left_out[:5])}, ...): a run"
        " keeps at most 100 files and 16777216 bytes (16 MiB) of them",
    ]
    assert not set(left_out) & set(run.outputs)
    out = tmp_path / "evals-out"
    write_benchmark(out, outcome.document, outcome.runs)
    written = list((out / "eval-1" / "with_skill" / "run-1" / "outputs").iterdir())
    assert len(written) == 100
    entry = next(e for e in outcome.document.runs if e.configuration == "with_skill")
    assert entry.notes == list(run.notes)


def test_a_transcript_over_its_bound_is_cut_and_says_so(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    final = "y" * (TRANSCRIPT_CAP_BYTES + MIB)
    with command_agent(CommandAgent("csv-stats", "true", final=final)) as url:
        outcome = run_benchmark(EvalRequest(skill, recording(url, tmp_path, runs=1), only=(1,)))
    run = _with_skill(outcome)
    transcript = run.transcript
    assert len(json.dumps(transcript, ensure_ascii=False).encode()) <= TRANSCRIPT_CAP_BYTES
    assert transcript["final_text"].endswith(
        f" [... {len(final) - 4 * MIB} more characters cut: transcript limit]"
    )
    [note] = run.notes
    assert re.fullmatch(
        r"transcript\.json: \d+ bytes, over the limit of 16777216 bytes \(16 MiB\) of a"
        r" transcript; its texts over 4194304 characters are cut, each marked where",
        note,
    )


def test_a_recording_over_the_cassette_limit_is_not_written_and_the_run_says_why(
    tmp_path: Path,
) -> None:
    skill = write_eval_skill(tmp_path)
    final = "z" * (MAX_CASSETTE_BYTES + MIB)
    with command_agent(CommandAgent("csv-stats", "true", final=final)) as url:
        options = recording(url, tmp_path, runs=1)
        big = Upstream(url, "sk-test", max_response_bytes=2 * MAX_CASSETTE_BYTES)
        options = replace(options, run=replace(options.settings, upstream=big))
        outcome = run_benchmark(EvalRequest(skill, options, only=(1,)))
    run = _with_skill(outcome)
    cassette = tmp_path / "eval-cassettes" / "csv-stats" / "eval-1" / "with_skill" / "run-1.json"
    assert not cassette.exists()
    error = run.error
    assert error is not None and error.kind == "harness"
    assert error.message.startswith(f"{cassette}: the recording is ")
    assert (
        " bytes, over the limit of 67108864 bytes (64 MiB) of a cassette, the largest one read"
        " back; it is not written." in error.message
    )
