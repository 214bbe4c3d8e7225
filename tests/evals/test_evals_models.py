"""The same evals on several models (``--model`` repeated, ``skills_eval_models``): one
output and cassette folder per model, ``models.json`` with each model's figures, recorded then
replayed offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.evals import Behaviour, fake_endpoint, write_eval_skill

REPO = Path(__file__).resolve().parents[2]
MODELS = ("fake-good", "vendor/fake-weak")
#: The good model always uses the skill, the weak one never: the skill helps only the first.
BEHAVIOUR = Behaviour(
    uses_skill_by_model={"fake-good": 1.0, "vendor/fake-weak": 0.0}, lucky_guess=0
)


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "eval", *args, "-q",
         "--runtime", "local",
         "--min-pass-rate", "0", "--runs", "3"],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _models(*names: str) -> list[str]:
    return [part for name in names for part in ("--model", name)]


def test_several_models_get_a_folder_each_and_an_overview(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    with fake_endpoint(BEHAVIOUR) as (endpoint, url):
        recorded = _eval(str(skill), *_models(*MODELS), "--record", "all", "--upstream-url", url,
                         "--out", "out", cwd=tmp_path)  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert {"fake-good", "vendor/fake-weak"} == {body["model"] for body in endpoint.bodies}
    overview = json.loads((tmp_path / "out" / "models.json").read_text())
    assert overview["models"] == list(MODELS)
    assert overview["folders"] == {"fake-good": "fake-good", "vendor/fake-weak": "vendor_fake-weak"}
    for model, folder in overview["folders"].items():
        document = json.loads((tmp_path / "out" / folder / "benchmark.json").read_text())
        assert document["metadata"]["executor_model"] == model
        assert (tmp_path / "out" / folder / "report.html").is_file()
        assert (tmp_path / "out" / folder / "eval-1" / "with_skill" / "run-1").is_dir()
        assert (
            tmp_path / "eval-cassettes" / "csv-stats" / folder / "eval-1" / "with_skill"
        ).is_dir()
        for entry in overview["evals"]:
            figures = entry["models"][model]
            verdict = next(
                item for item in document["evals"] if item["eval_id"] == entry["eval_id"]
            )
            runs = [
                run for run in document["runs"]
                if run["eval_id"] == entry["eval_id"] and run["configuration"] == "with_skill"
            ]  # fmt: skip
            assert figures == {
                "with_skill": verdict["pass_rate"]["with_skill"]["mean"],
                "with_skill_ci95": verdict["pass_rate"]["with_skill"]["ci95"],
                "delta": verdict["delta"],
                "delta_ci95": verdict["delta_ci95"],
                "verdict": verdict["verdict"],
                "tokens": round(sum(run["result"]["tokens"] for run in runs) / len(runs), 1),
                "time_seconds": round(
                    sum(run["result"]["time_seconds"] for run in runs) / len(runs), 3
                ),
            }
        overall = overview["overall"][model]
        assert overall["delta_ci95"] == document["overall"]["delta_ci95"]
        assert overall["with_skill"] == document["run_summary"]["with_skill"]["pass_rate"]["mean"]
    # The skill helps the model that uses it, and not the one that never does.
    assert {entry["models"]["fake-good"]["verdict"] for entry in overview["evals"]} == {"better"}
    assert {entry["models"]["vendor/fake-weak"]["verdict"] for entry in overview["evals"]} == {
        "inconclusive"
    }
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.index('id="models"') < page.index("</main>")
    assert 'href="vendor_fake-weak/report.html"' in page

    replayed = _eval(str(skill), *_models(*MODELS), "--out", "again", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads((tmp_path / "again" / "models.json").read_text()) == overview

    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nskills_eval_models = ["fake-good", "vendor/fake-weak"]\n'
    )
    by_ini = _eval(str(skill), "--out", "by-ini", cwd=tmp_path)
    assert by_ini.returncode == 0, by_ini.stderr
    assert json.loads((tmp_path / "by-ini" / "models.json").read_text()) == overview


def test_two_models_sharing_a_folder_name_are_refused(tmp_path: Path) -> None:
    skill = write_eval_skill(tmp_path)
    refused = _eval(str(skill), *_models("a/b", "a_b"), "--out", "out", cwd=tmp_path)
    assert refused.returncode == 2
    assert (
        "--model 'a/b' and --model 'a_b' would share the output folder 'a_b'; give models whose"
        " names differ in letters or digits"
    ) in refused.stderr
