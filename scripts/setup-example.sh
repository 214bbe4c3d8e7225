#!/usr/bin/env bash
# What example_suite/ needs beyond the package (scripts/example.sh runs this before pytest). Its
# eval items and overlap tests replay the model's commands, which run isolated: in the sandbox
# (bubblewrap), else in Docker; without either they skip with the reason. As root this installs
# bubblewrap, as scripts/setup-services.sh does for the project's tests. Otherwise, when no
# isolated runtime works here, it says which items will skip and what to install. Needs the
# package installed; changes nothing but the packages it installs as root.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = "0" ]; then
    exec bash scripts/install-packages.sh bwrap=bubblewrap
fi

python3 - <<'PYTHON'
import sys

from pytest_agent_skills.evals.setup.eval_runtime import EvalRuntimeError, choose_runtime
from pytest_agent_skills.workspace import create_runtime

try:
    choose_runtime(None, create_runtime).close()
except EvalRuntimeError as error:
    print(
        "setup-example: the eval items and the overlap tests will skip (their replays run the"
        f" model's commands isolated): {error}\nTo run them: install bubblewrap as root"
        " (apt-get install bubblewrap), or run 'bash scripts/example.sh' as root, which"
        " installs it.",
        file=sys.stderr,
    )
PYTHON
