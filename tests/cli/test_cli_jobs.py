"""`agent-skills validate --jobs`: the skills shared out to processes, the report unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agent_skills.cli import main
from pytest_agent_skills.rules._split import SHARE_AT_LEAST
from tests.support.cli import failing_report
from tests.support.corpus import CORPUS
from tests.support.forks import COUNT_FORKS
from tests.support.skill_files import copies_for_shares, write_copies

FORMATS = ("text", "json", "sarif", "github", "junit")
#: Copies of seven skills (``write_copies``) enough to be shared out to three processes.
SHARED_OUT_COPIES = copies_for_shares(3)


@pytest.mark.parametrize("form", FORMATS)
def test_every_format_is_the_same_whatever_the_jobs(tmp_path: Path, form: str) -> None:
    write_copies(tmp_path, SHARED_OUT_COPIES)
    alone = failing_report("--format", form, "--jobs", "1", ".", cwd=tmp_path)
    assert alone
    for jobs in ("2", "3", "auto"):
        assert failing_report("--format", form, "-j", jobs, ".", cwd=tmp_path) == alone, jobs


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the public corpus is not at {CORPUS}")
@pytest.mark.parametrize("form", ["text", "sarif"])
def test_the_corpus_report_is_the_same_whatever_the_jobs(tmp_path: Path, form: str) -> None:
    # Copies of the corpus, enough skills to be shared out (their names clash across copies).
    skills = sum(1 for _ in CORPUS.rglob("SKILL.md"))
    for copy in range(max(2, -(-2 * SHARE_AT_LEAST // skills))):
        shutil.copytree(CORPUS, tmp_path / f"copy-{copy}", symlinks=True)
    shared_out = failing_report("--format", form, "-j", "2", ".", cwd=tmp_path)
    assert shared_out == failing_report("--format", form, "-j", "1", ".", cwd=tmp_path)


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_a_jobs_value_that_is_no_positive_number_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", "--jobs", value, "."])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "agent-skills validate: error: argument -j/--jobs: expected a positive number or"
        f" 'auto', got {value!r}"
    )


#: The CLI in a fresh interpreter, os.fork counted, on the processors given, the kernel's load
#: figures read from the file given: prints the count.
AUTO = COUNT_FORKS + """
import contextlib, io, sys
from pytest_agent_skills.cli import main
from pytest_agent_skills.rules import _split
os.sched_setaffinity(0, {int(cpu) for cpu in sys.argv[2].split(",")})
_split.LOAD_FILE = sys.argv[3]  # the machine as busy as the test says
with contextlib.redirect_stdout(io.StringIO()):
    main(["validate", "--exit-zero", sys.argv[1]])
print(len(forked))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auto forks on Linux only")
def test_auto_forks_one_child_per_further_idle_processor_this_process_may_use(
    tmp_path: Path,
) -> None:
    skills = tmp_path / "skills"
    write_copies(skills, SHARED_OUT_COPIES)
    load_file = tmp_path / "loadavg"
    usable = sorted(os.sched_getaffinity(0))
    machine = os.cpu_count() or 1
    for processors in sorted({1, min(2, len(usable))}):
        cpus = ",".join(str(cpu) for cpu in usable[:processors])
        # An idle machine (this process the one runnable task): one child per further
        # processor, whatever the load average says of the last minute.  Every processor busy,
        # or as many busy as would leave this process one: no child.
        for busy, children in ((0, processors - 1), (machine, 0), (machine // processors, 0)):
            load_file.write_text(f"{machine:.2f} {machine:.2f} 0.00 {busy + 1}/180 4242\n")
            done = subprocess.run(
                [sys.executable, "-c", AUTO, str(skills), cpus, str(load_file)],
                capture_output=True, text=True, check=True, timeout=120,
            )
            assert done.stdout == f"{children}\n", (processors, busy)
