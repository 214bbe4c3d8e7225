#!/usr/bin/env bash
# The main job: the plugin over example_suite/, a user's skill repository. As root it also
# installs bubblewrap, so the eval items run; otherwise it says what to install for the items
# that skip (scripts/setup-example.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
bash scripts/setup-example.sh
cd example_suite
exec python3 -m pytest -v "$@"
