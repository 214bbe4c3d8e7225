#!/usr/bin/env bash
# Runs the project's tests on a fresh machine: installs what they need, then pytest.
# As root it also installs and starts the services the tests use (Docker engine,
# bubblewrap, the offline Docker test image); elsewhere those tests skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
# The real model server of the realmodel tests (as root it installs the compiler it needs).
bash scripts/setup-realmodel.sh
if [ "$(id -u)" = "0" ]; then
    bash scripts/setup-services.sh
    # The services exist now: a test that finds one missing fails instead of skipping.
    export PYTEST_AGENT_SKILLS_REQUIRE_SERVICES=1
fi

python3 -m ruff check .
# A type error fails the run as a failing test does.
python3 -m mypy --strict pytest_agent_skills

status=0
python3 -m pytest "$@" || status=$?
if [ "$status" = "5" ]; then
    echo "pytest collected no tests" >&2
fi

# The checks that lean on pytest's and markdown-it-py's details again on the oldest supported
# releases and on the newest, each in a virtualenv of its own (noxfile.py). PYTEST_AGENT_SKILLS_NOX=0 leaves them out of a local run.
if [ "${PYTEST_AGENT_SKILLS_NOX:-1}" != "0" ]; then
    # Each end runs on a Python of its own (noxfile.PYTHONS): where pyenv installed the Pythons,
    # its shims answer for every version it has, not only its global one.
    if command -v pyenv >/dev/null; then
        PYENV_VERSION="$(pyenv version-name):$(pyenv versions --bare --skip-aliases | tr '\n' ':')"
        export PYENV_VERSION="${PYENV_VERSION%:}"
    fi
    nox_status=0
    python3 -m nox || nox_status=$?
    if [ "$status" = "0" ]; then
        status=$nox_status
    fi
fi
exit "$status"
