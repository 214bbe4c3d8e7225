"""README command 1's job: the plugin over example_suite/ passes in every runtime, and the
output shows what was validated, run and replayed, and the coverage summary."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.evals import no_isolation
from tests.support.services import missing_service
from tests.support.workspace import RUNTIME_PARAMS, get_runtime

EXAMPLE_SUITE = Path(__file__).resolve().parents[2] / "example_suite"


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    """A copy, so that the run leaves nothing (caches, expected files) in the repository."""
    return Path(shutil.copytree(EXAMPLE_SUITE, tmp_path / "example_suite", symlinks=True))


@pytest.mark.parametrize("runtime", RUNTIME_PARAMS)
def test_the_example_suite_passes_in_every_runtime(
    runtime: str, suite_copy: Path, tmp_path: Path
) -> None:
    get_runtime(runtime, tmp_path / "probe")  # skips (fails in CI) when the engine is missing
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-v",
            f"--skills-runtime={runtime}",
            f"--skills-eval-runtime={runtime}",
        ],
        cwd=suite_copy,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout
    assert completed.returncode == 0, output + completed.stderr
    for expected in (
        "agent-skills: skills_roots=[.claude/skills], skills_profile=trpc,"
        f" skills_runtime={runtime}, skills_runtime_missing=skip, skills_record=none,",
        f"skills_eval_runtime={runtime}",
        ".claude/skills/invoice-totals/SKILL.md::validate PASSED",
        ".claude/skills/meeting-notes/SKILL.md::validate PASSED",
        "tests/test_invoice_totals.py::test_totals_per_customer PASSED",
        "tests/test_agent.py::test_the_recorded_agent_totals_the_invoices PASSED",
        ".claude/skills/invoice-totals/evals/totals.scenario.yaml::totals for two customers PASSED",
        ".claude/skills/invoice-totals/evals/evals.json::eval 1: total of one customer PASSED",
        ".claude/skills/invoice-totals/evals/triggers.json::triggers PASSED",
        "cassettes: 0 recorded (0 interactions), 1 replayed (4 interactions),"
        " 0 unused interaction(s)",
        "invoice-totals: loaded by 2 of the 4 scenario(s) that offered it",
        " passed in ",
    ):
        assert expected in output, f"{expected!r} not in the output:\n{output}"
    assert " failed" not in output and "skipped" not in output


def test_the_broken_examples_fail_with_rule_ids_and_lines(suite_copy: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "broken"],
        cwd=suite_copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 1
    for expected in (
        "broken/Bad_Name/SKILL.md:2: error [name-charset]",
        "broken/Bad_Name/SKILL.md:4: error [field-unknown]",
        "broken/Bad_Name/SKILL.md:7: error [reference-missing]",
        "broken/no-front-matter/SKILL.md:1: error [frontmatter-missing]",
        "broken/tools-trouble/SKILL.md:7: error [tools-not-identifier]",
    ):
        assert expected in completed.stdout, f"{expected!r} not in:\n{completed.stdout}"


def test_without_sandbox_or_docker_the_example_suite_skips_its_evals(
    suite_copy: Path, tmp_path: Path
) -> None:
    """On a machine with neither bubblewrap nor Docker, the evals (the model's commands) are
    skipped with the reason; the rest runs on the local runtime and passes."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider"],
        cwd=suite_copy,
        env=no_isolation(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout
    assert completed.returncode == 0, output + completed.stderr
    assert "evals.json::eval 1: total of one customer SKIPPED" in output
    assert "triggers.json::triggers SKIPPED" in output
    assert "tests/test_overlap.py::test_the_matrix_shows_expense_report_misfiring SKIPPED" in output
    assert "no isolated runtime for the commands the model chooses" in output
    scenario = ".claude/skills/invoice-totals/evals/totals.scenario.yaml::totals for two customers"
    assert f"{scenario} PASSED" in output
    assert " failed" not in output


SCRIPTS = EXAMPLE_SUITE.parent / "scripts"


def _script(name: str, *arguments: str, env: dict[str, str], as_user: bool = False) -> Any:
    """``bash scripts/NAME ARGUMENTS`` from the repository's root; ``as_user``: as uid 65534 in
    a user namespace of its own (the files of root, the caller, are that uid's there)."""
    prefix = ["unshare", "--user", "--map-user=65534", "--map-group=65534"] if as_user else []
    return subprocess.run(
        [*prefix, "bash", str(SCRIPTS / name), *arguments],
        cwd=EXAMPLE_SUITE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_not_as_root_without_an_isolated_runtime_the_set_up_says_what_to_install(
    tmp_path: Path,
) -> None:
    """What example.sh prints before pytest where its eval items would skip: which items, why,
    and what to install."""
    if os.geteuid() != 0:
        pytest.skip("makes a user namespace in which it is not root: run as root")
    completed = _script("setup-example.sh", env=no_isolation(tmp_path), as_user=True)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""
    assert completed.stderr.startswith(
        "setup-example: the eval items and the overlap tests will skip (their replays run the"
        " model's commands isolated): no isolated runtime for the commands the model chooses:"
    )
    sandbox = "- sandbox: the sandbox runtime needs bubblewrap ('bwrap'), not found on PATH"
    assert sandbox in completed.stderr
    assert completed.stderr.endswith(
        "\nTo run them: install bubblewrap as root (apt-get install bubblewrap), or run"
        " 'bash scripts/example.sh' as root, which installs it.\n"
    )


def test_as_root_with_bubblewrap_found_the_set_up_installs_nothing(tmp_path: Path) -> None:
    """Without apt-get on PATH: were the set-up to install anything, it would fail."""
    if os.geteuid() != 0:
        pytest.skip("the set-up installs only as root")
    if shutil.which("bwrap") is None:
        missing_service("bubblewrap is not installed (scripts/setup-services.sh installs it)")
    programs = tmp_path / "bin"
    programs.mkdir()
    for name in ("bash", "bwrap", "dirname", "id"):
        (programs / name).symlink_to(shutil.which(name) or name)
    environment = {**os.environ, "PATH": str(programs)}
    completed = _script("setup-example.sh", env=environment)
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "", "")


def test_the_package_install_step_is_shared_and_checks_its_arguments() -> None:
    """One apt-get step (install-packages.sh) for every script that installs packages."""
    installing = sorted(
        path.name for path in SCRIPTS.glob("*.sh") if "apt-get install -y" in path.read_text()
    )
    assert installing == ["install-packages.sh"]
    for name in ("setup-services.sh", "setup-realmodel.sh", "setup-example.sh"):
        assert "install-packages.sh" in (SCRIPTS / name).read_text(), name
    assert "bash scripts/setup-example.sh" in (SCRIPTS / "example.sh").read_text()
    completed = _script("install-packages.sh", "bwrap", env=dict(os.environ))
    assert completed.returncode == 1
    assert completed.stderr == (
        "install-packages: ERROR: 'bwrap': give each package as COMMAND=PACKAGE"
        " (bwrap=bubblewrap)\n"
    )
