#!/usr/bin/env bash
# The main job: the plugin over example_suite/, a user's skill repository.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
cd example_suite
exec python3 -m pytest -v "$@"
